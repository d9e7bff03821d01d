package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/internal/cli/clitest"
	"lookahead/internal/nsstest"
)

// The agent as packaged — a static binary (CGO_ENABLED=0), where Go's
// os/user reads /etc/passwd alone — finds a user that exists only in an
// NSS source other than /etc/passwd (a directory user; here Debian's
// extrausers): check resolves dispatch.users as the agent does at every
// reserve and dispatch, through getent.
func TestStaticAgentFindsNSSOnlyUser(t *testing.T) {
	who := nsstest.ExtraUser(t)
	bin := filepath.Join(clitest.Build(t, "lookahead/cmd/lookahead-agent"), "lookahead-agent")
	cfg := writeFile(t, "agent.yaml", "site: a\nbackend: simulated\nstate_dir: "+t.TempDir()+
		"\ndispatch:\n  users: {carol: "+nsstest.User+", dave: no-such-user-here}\n")
	out, _ := exec.Command(bin, "check", "--config", cfg, "--skip", "logs,nats,state,forecast", "-o", "json").Output()
	var results []checkResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("check output: %v\n%s", err, out)
	}
	byName := map[string]checkResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	if r := byName["dispatch user carol"]; !r.OK || !strings.Contains(r.Detail, fmt.Sprintf("→ %s (uid %d", nsstest.User, who.UID)) {
		t.Errorf("the static agent does not find %s: %+v", nsstest.User, r)
	}
	if r := byName["dispatch user dave"]; r.OK {
		t.Errorf("a user no source knows: %+v", r)
	}
}
