// Package nsstest gives tests a local user that exists only in an NSS
// source other than /etc/passwd — Debian's libnss-extrausers, which
// scripts/ensure-extrausers.sh installs and configures — as users kept
// in LDAP or SSSD exist: seen only through the system's name service
// switch (getent, and every libc program: pbs_mom, slurmd, slurmstepd),
// never by a reader of /etc/passwd (Go's os/user in a static build).
// Test helpers only.
package nsstest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// User is the name of the NSS-only test user.
const User = "lookahead-nssonly"

// RequireEnv, set to 1 by scripts/test.sh once
// scripts/ensure-extrausers.sh succeeded, turns every skip after the root
// check into a failure. (Outside LOOKAHEAD_*, which the daemons read.)
const RequireEnv = "LOOKAHEADTEST_REQUIRE_EXTRAUSERS"

// Account is the NSS-only user as getent passwd gives it.
type Account struct {
	Name     string
	UID, GID int
}

const extraDir = "/var/lib/extrausers"

// ExtraUser adds User (and its group) to the extrausers database when it
// is not there (idempotent; a lock keeps test binaries running at once
// from adding it twice) and returns it as the system resolves it; it
// skips the test, saying why, where this cannot work.
func ExtraUser(t testing.TB) Account {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("nsstest: adding a user to the extrausers database needs root")
	}
	if err := configured(); err != nil {
		skipOrFail(t, "nsstest: %v (scripts/ensure-extrausers.sh installs and configures libnss-extrausers)", err)
	}
	if err := add(); err != nil {
		t.Fatalf("nsstest: %v", err)
	}
	a, err := lookup(User)
	if err != nil {
		t.Fatalf("nsstest: %s was added to %s/passwd but the system does not resolve it: %v", User, extraDir, err)
	}
	if inEtcPasswd(User) {
		t.Fatalf("nsstest: %s is in /etc/passwd too: not an NSS-only user", User)
	}
	return a
}

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf(format+" ("+RequireEnv+"=1)", args...)
	}
	t.Skipf(format, args...)
}

var extraLine = regexp.MustCompile(`(?m)^(passwd|group):.*\bextrausers\b`)

// configured checks that nsswitch.conf reads extrausers for users and
// groups and that its database exists.
func configured() error {
	conf, err := os.ReadFile("/etc/nsswitch.conf")
	if err != nil {
		return err
	}
	if n := len(extraLine.FindAll(conf, -1)); n != 2 {
		return fmt.Errorf("/etc/nsswitch.conf does not list extrausers for passwd and group")
	}
	for _, f := range []string{"passwd", "group"} {
		if _, err := os.Stat(extraDir + "/" + f); err != nil {
			return err
		}
	}
	return nil
}

// add appends User to the extrausers passwd and group files under an
// exclusive lock, on a uid no NSS source uses yet.
func add() error {
	lock, err := os.OpenFile(extraDir+"/.lookahead-test.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	passwd, err := os.ReadFile(extraDir + "/passwd")
	if err != nil {
		return err
	}
	if bytes.Contains(passwd, []byte("\n"+User+":")) || bytes.HasPrefix(passwd, []byte(User+":")) {
		return nil
	}
	id, err := freeID()
	if err != nil {
		return err
	}
	if err := appendLine(extraDir+"/group", fmt.Sprintf("%s:x:%d:", User, id)); err != nil {
		return err
	}
	return appendLine(extraDir+"/passwd", fmt.Sprintf("%s:x:%d:%d:lookahead NSS-only test user:/nonexistent:/usr/sbin/nologin", User, id, id))
}

// freeID is the first id from 2900 that no passwd or group source knows.
func freeID() (int, error) {
	for id := 2900; id < 3900; id++ {
		s := strconv.Itoa(id)
		if exec.Command("getent", "passwd", s).Run() != nil && exec.Command("getent", "group", s).Run() != nil {
			return id, nil
		}
	}
	return 0, fmt.Errorf("no free id in [2900, 3900)")
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lookup resolves name through the system's NSS (getent passwd).
func lookup(name string) (Account, error) {
	out, err := exec.Command("getent", "passwd", name).Output()
	if err != nil {
		return Account{}, fmt.Errorf("getent passwd %s: %w", name, err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), ":")
	if len(f) != 7 {
		return Account{}, fmt.Errorf("getent passwd %s: %q", name, out)
	}
	uid, err1 := strconv.Atoi(f[2])
	gid, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return Account{}, fmt.Errorf("getent passwd %s: %q", name, out)
	}
	return Account{Name: f[0], UID: uid, GID: gid}, nil
}

func inEtcPasswd(name string) bool {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), name+":") {
			return true
		}
	}
	return false
}
