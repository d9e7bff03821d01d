package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigPrecedenceAndPackagedFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.yaml")
	os.WriteFile(file, []byte(`
planning:
  cycle: 45s
  commit_lead: 20m
identities:
  - nats_user: alice
    users: [alice]
    accounts: [proj1]
budgets:
  accounts: {proj1: 500}
`), 0o600)
	t.Setenv("LOOKAHEAD_PLANNING_COMMIT_LEAD", "15m")
	cmd := newRunCommand()
	cmd.Flags().Parse([]string{"--config", file, "--site-ttl", "2m"})
	c, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if c.Planning.Cycle != 45*time.Second || c.Planning.CommitLead != 15*time.Minute || c.Planning.SiteTTL != 2*time.Minute {
		t.Fatalf("precedence: cycle %v lead %v ttl %v", c.Planning.Cycle, c.Planning.CommitLead, c.Planning.SiteTTL)
	}
	p := c.Policy()
	if a := p.Identities["alice"]; len(a.Accounts) != 1 || p.Budgets.Accounts["proj1"] != 500 {
		t.Fatalf("policy %+v", p)
	}
	// The packaged default config must load as it is.
	cmd = newRunCommand()
	cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml"})
	if _, err := loadConfig(cmd.Flags()); err != nil {
		t.Fatalf("packaged broker.yaml: %v", err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"planning: {cycle: 0s}":                        "planning.cycle",
		"identities: [{nats_user: 'a b', users: [x]}]": "identities[0].nats_user",
		"budgets: {accounts: {p: -1}}":                 "budgets.accounts.p",
		"nats: {creds: /x, token: y}":                  "choose one",
		"planning: {multi_site_factor: 0.5}":           "multi_site_factor",
	} {
		file := filepath.Join(dir, "b.yaml")
		os.WriteFile(file, []byte(body), 0o600)
		cmd := newRunCommand()
		cmd.Flags().Parse([]string{"--config", file})
		if _, err := loadConfig(cmd.Flags()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", body, err, want)
		}
	}
	cmd := newRunCommand()
	cmd.Flags().Parse([]string{"--config", filepath.Join(dir, "missing.yaml")})
	if _, err := loadConfig(cmd.Flags()); err == nil {
		t.Error("missing explicit config file accepted")
	}
}
