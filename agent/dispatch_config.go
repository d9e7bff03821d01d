package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// DispatchConfig is how the site runs grid jobs' parts (see
// docs/dispatch.md). The zero value maps every grid user to the local
// user of the same name, refuses uids below 1000, writes output to the
// local user's home directory and keeps 30 s of slack in the reservation.
type DispatchConfig struct {
	// Users maps a grid user to the local user its parts run as; a grid
	// user not listed runs as the local user of the same name.
	Users map[string]string
	// MinUID is the lowest uid a part may run as (default 1000): root and
	// system users are refused whatever the map says.
	MinUID int
	// OutputDir is where a part's stdout and stderr go, as
	// <dir>/la.<job>.<part>.out and .err; "{home}" and "{user}" are
	// replaced by the local user's home directory and name (default
	// "{home}").
	OutputDir string
	// StartSlack is how much of the reservation a part's walltime leaves
	// free: Maui 3.3.1 starts a job in its reservation only if the
	// walltime fits in what is left when it next polls, so a walltime as
	// long as the reservation never starts (default 30 s; at least the
	// scheduler's poll interval).
	StartSlack time.Duration
	// OutputCopied, set when the site's pbs_mom writes a job's output
	// in the user's ~/.pbs_spool and copies it to the -o/-e paths at the
	// job's end (Torque built with --disable-spool, no
	// $spool_as_final_name: torque.Delivery), makes a dispatch reply say
	// when the output will stay out of those paths (outputNote).
	OutputCopied bool
}

// Defaults of DispatchConfig.
const (
	DefaultMinUID     = 1000
	DefaultOutputDir  = "{home}"
	DefaultStartSlack = 30 * time.Second
)

func (c DispatchConfig) withDefaults() DispatchConfig {
	if c.MinUID == 0 {
		c.MinUID = DefaultMinUID
	}
	if c.OutputDir == "" {
		c.OutputDir = DefaultOutputDir
	}
	if c.StartSlack == 0 {
		c.StartSlack = DefaultStartSlack
	}
	return c
}

func (c DispatchConfig) validate() error {
	var errs []error
	for grid, local := range c.Users {
		if !forecast.IsPlainName(grid) || !forecast.IsPlainName(local) {
			errs = append(errs, fmt.Errorf("dispatch.users: %q → %q: both must be plain names", grid, local))
		}
	}
	if c.MinUID < 1 {
		errs = append(errs, fmt.Errorf("dispatch.min_uid: %d, must be >= 1 (root is never allowed)", c.MinUID))
	}
	dir := strings.NewReplacer("{home}", "/h", "{user}", "u").Replace(c.OutputDir)
	if !strings.HasPrefix(dir, "/") || strings.ContainsAny(dir, ",{} \t\n") {
		errs = append(errs, fmt.Errorf("dispatch.output_dir %q: an absolute path without spaces or commas; placeholders {home} and {user}", c.OutputDir))
	}
	if c.StartSlack < 0 {
		errs = append(errs, fmt.Errorf("dispatch.start_slack: %s, must be >= 0", durfmt.Duration(c.StartSlack)))
	}
	return errors.Join(errs...)
}

// LocalUser is an account of the site a part may run as.
type LocalUser struct {
	Name string
	UID  int
	Home string
}

// UserLookup finds a local account by name (default: the system's NSS,
// SystemUsers). An error is "does not exist", unless it wraps
// ErrUserLookup.
type UserLookup func(name string) (LocalUser, error)

// LocalIdentity is the identity a grid job's reservations admit: the
// grid user mapped to its local account (Users; a user not listed keeps
// its name), so that the ACL names the account its parts run as, never a
// local account that happens to bear the grid user's name. Root is
// refused. Pure.
func LocalIdentity(c DispatchConfig, id wire.Identity) (wire.Identity, *Refusal) {
	if local, ok := c.Users[id.User]; ok {
		id.User = local
	}
	if id.User == "root" {
		return id, refuse(wire.CodeForbidden, "grid user maps to root: refused")
	}
	return id, nil
}
