package agent_test

import (
	"errors"
	"testing"

	"lookahead/agent"
	"lookahead/internal/nsstest"
)

// Local users come from the system's NSS (getent passwd): root is found
// with its uid; a name no database knows, or a number (getent would read
// it as a uid), is no such user.
func TestNSSUsers(t *testing.T) {
	u, err := agent.SystemUsers("root")
	if err != nil || u.UID != 0 || u.Name != "root" || u.Home == "" {
		t.Fatalf("root: %+v, %v", u, err)
	}
	for _, name := range []string{"no-such-user-here", "0"} {
		if u, err := agent.SystemUsers(name); !errors.Is(err, agent.ErrNoSuchUser) {
			t.Errorf("%s: %+v, %v; want no such user", name, u, err)
		}
	}
	for _, line := range []string{"", "a:x:1", "a:x:-1:0::/h:/bin/sh", "a:x:one:0::/h:/bin/sh"} {
		if _, err := agent.ParsePasswd(line); err == nil {
			t.Errorf("passwd entry %q read", line)
		}
	}
}

// A user kept only in a directory (here Debian's extrausers, as LDAP or
// SSSD keep them) is found, with its uid: Go's os/user in the agent's
// static build reads /etc/passwd alone and would not.
func TestNSSUsersFindsDirectoryUser(t *testing.T) {
	want := nsstest.ExtraUser(t)
	u, err := agent.SystemUsers(nsstest.User)
	if err != nil || u.UID != want.UID || u.Name != nsstest.User {
		t.Fatalf("%s: %+v, %v; want uid %d", nsstest.User, u, err, want.UID)
	}
}
