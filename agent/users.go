package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lookahead/internal/execx"
)

// Local users are resolved through the system's name service switch
// (nsswitch.conf: files, sss, ldap, extrausers, …), the database pbs_mom,
// slurmd and every libc program read, by running glibc's `getent passwd
// NAME`. The packaged binaries are static (CGO_ENABLED=0), where Go's
// os/user reads /etc/passwd alone and would refuse every user kept in a
// directory; getent keeps them static. docs/dispatch.md, "Local users".

// ErrNoSuchUser is what NSSUsers returns for a name the system does not
// know. Any other error of a UserLookup also reads as "does not exist",
// except ErrUserLookup.
var ErrNoSuchUser = errors.New("no such user")

// ErrUserLookup wraps a failure of the lookup itself (getent missing or
// timed out): the user may exist, the site cannot tell now.
var ErrUserLookup = errors.New("user lookup failed")

// nssTimeout bounds one getent call (an LDAP server that does not answer
// must not hold a request for long).
const nssTimeout = 10 * time.Second

// NSSUsers looks accounts up with `getent passwd NAME` through run (a
// Runner with a timeout per call). getent exits 2 for a name no database
// knows.
func NSSUsers(run execx.Runner) UserLookup {
	return func(name string) (LocalUser, error) {
		ctx, cancel := context.WithTimeout(context.Background(), nssTimeout)
		defer cancel()
		res, err := run.Run(ctx, "getent", "passwd", name)
		switch {
		case err != nil:
			return LocalUser{}, fmt.Errorf("%w: getent passwd %s: %w", ErrUserLookup, name, err)
		case res.ExitCode == 2:
			return LocalUser{}, fmt.Errorf("getent passwd %s: %w", name, ErrNoSuchUser)
		case res.ExitCode != 0:
			return LocalUser{}, fmt.Errorf("%w: getent passwd %s: exit %d: %s", ErrUserLookup, name, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
		}
		u, err := ParsePasswd(strings.TrimSpace(string(res.Stdout)))
		if err != nil {
			return LocalUser{}, fmt.Errorf("%w: getent passwd %s: %w", ErrUserLookup, name, err)
		}
		if u.Name != name { // getent takes a number for a uid: "1001" is not the user named 1001
			return LocalUser{}, fmt.Errorf("getent passwd %s: %w (it names uid %d, %s)", name, ErrNoSuchUser, u.UID, u.Name)
		}
		return u, nil
	}
}

// SystemUsers looks accounts up through the system's NSS (NSSUsers with
// the exec runner).
func SystemUsers(name string) (LocalUser, error) {
	return NSSUsers(execx.New(execx.Config{Timeout: nssTimeout}))(name)
}

// ParsePasswd reads one passwd entry, name:password:uid:gid:gecos:home:shell
// (the first line when there are several). Pure.
func ParsePasswd(line string) (LocalUser, error) {
	line, _, _ = strings.Cut(line, "\n")
	f := strings.Split(line, ":")
	if len(f) != 7 || f[0] == "" {
		return LocalUser{}, fmt.Errorf("passwd entry %q: want 7 fields name:x:uid:gid:gecos:home:shell", clip(line))
	}
	uid, err := strconv.Atoi(f[2])
	if err != nil || uid < 0 {
		return LocalUser{}, fmt.Errorf("passwd entry of %s: uid %q", f[0], clip(f[2]))
	}
	return LocalUser{Name: f[0], UID: uid, Home: f[5]}, nil
}
