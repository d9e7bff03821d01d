package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"time"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
	"lookahead/internal/config"
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
	cmd := subcommand("run")
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
	cmd = subcommand("run")
	cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml"})
	if _, err := loadConfig(cmd.Flags()); err != nil {
		t.Fatalf("packaged broker.yaml: %v", err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"planning: {cycle: 0s}":                         "planning.cycle",
		"identities: [{nats_user: 'a b', users: [x]}]":  "identities[0].nats_user",
		"budgets: {accounts: {p: -1}}":                  "budgets.accounts.p",
		"nats: {creds: /x, token: y}":                   "choose one",
		"planning: {multi_site_factor: 0.5}":            "multi_site_factor",
		"planning: {criterion: soonest}":                "\"soonest\": must be one of",
		"planning: {tolerance: -1}":                     "planning.tolerance",
		"planning: {tolerance: 101}":                    "planning.tolerance",
		"planning: {free_tolerance: -1}":                "planning.free_tolerance",
		"planning: {free_tolerance: 101}":               "planning.free_tolerance",
		"planning: {free_tolerance: 2h}":                "planning.free_tolerance",
		"planning: {free_window: since-start}":          "planning.free_window \"since-start\": must be \"each-cycle\" or \"since-submit\"",
		"planning: {split_backlog: 101}":                "planning.split_backlog",
		"planning: {split_backlog: -1}":                 "planning.split_backlog",
		"planning: {order: random}":                     "planning.order: \"random\": must be",
		"planning: {order: aging}":                      "planning.aging: required with planning.order \"aging\"",
		"planning: {order: aging, aging: 7200}":         "planning.aging: 7200 has no unit",
		"planning: {aging: 2h}":                         "planning.aging: 2h: only planning.order \"aging\" uses it",
		"planning: {order: price, aging: 2h}":           "planning.aging: 2h: only planning.order \"aging\" uses it (the order is \"price\")",
		"web: {listen: ':9466'}":                        "web.listen: \":9466\" is not a loopback address: set web.token_file",
		"web: {listen: '10.0.0.1:9466'}":                "web.listen: \"10.0.0.1:9466\" is not a loopback address",
		"web: {listen: nohost}":                         "web.listen",
		"web: {listen: '127.0.0.1:1', tls_key_file: k}": "web.tls_cert_file: set it and web.tls_key_file together, or neither",
	} {
		file := filepath.Join(dir, "b.yaml")
		os.WriteFile(file, []byte(body), 0o600)
		cmd := subcommand("run")
		cmd.Flags().Parse([]string{"--config", file})
		if _, err := loadConfig(cmd.Flags()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", body, err, want)
		}
	}
	cmd := subcommand("run")
	cmd.Flags().Parse([]string{"--config", filepath.Join(dir, "missing.yaml")})
	if _, err := loadConfig(cmd.Flags()); err == nil {
		t.Error("missing explicit config file accepted")
	}
}

// TestStrictConfig: the mistakes that made a live broker spin (a cycle
// without a unit) or spend without limit (a misspelt budget key) are
// errors naming the key and the file line, the variable or the flag.
func TestStrictConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.yaml")
	os.WriteFile(file, []byte("log_level: info\nplanning:\n  cycle: 30\nbudgets: {default_budjet: 0}\nnats: {ulr: nats://elsewhere:4222}\n"), 0o600)
	cmd := subcommand("run")
	cmd.Flags().Parse([]string{"--config", file})
	_, err := loadConfig(cmd.Flags())
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{file + ":3: planning.cycle: 30 has no unit", file + ":4: budgets.default_budjet: unknown key; did you mean budgets.default_budget?",
		file + ":5: nats.ulr: unknown key; did you mean nats.url?"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	cmd = subcommand("run")
	cmd.Flags().Parse([]string{"--cycle", "0s"})
	if _, err = loadConfig(cmd.Flags()); err == nil || !strings.Contains(err.Error(), "--cycle: planning.cycle: 0s is below the least allowed, 1s") {
		t.Errorf("--cycle 0s: %v", err)
	}
	t.Setenv("LOOKAHEAD_PLANNING_RESERVE_TIMEOUT", "30")
	cmd = subcommand("run")
	cmd.Flags().Parse(nil)
	if _, err = loadConfig(cmd.Flags()); err == nil || !strings.Contains(err.Error(), "LOOKAHEAD_PLANNING_RESERVE_TIMEOUT=30: planning.reserve_timeout: 30 has no unit") {
		t.Errorf("unit-less variable: %v", err)
	}
}

// TestConfigCommandPrintsWhatTakesEffect: `config` prints the keys as
// the file spells them, and its output is itself a valid config file that
// loads to the same configuration.
func TestConfigCommandPrintsWhatTakesEffect(t *testing.T) {
	dir := t.TempDir()
	cmd := subcommand("config")
	cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml", "--cycle", "45s"})
	c, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cli.PrintConfig(&out, cli.FormatJSON, c, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"cycle": "45s"`) || !strings.Contains(out.String(), `"default_budget": 0`) {
		t.Fatalf("output:\n%s", out.String())
	}
	file := filepath.Join(dir, "again.yaml")
	os.WriteFile(file, []byte(out.String()), 0o600)
	cmd = subcommand("config")
	cmd.Flags().Parse([]string{"--config", file})
	again, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatalf("the printed config does not load: %v", err)
	}
	if !reflect.DeepEqual(config.Effective(again), config.Effective(c)) { // nil and empty maps print alike
		t.Fatalf("reloaded\n%+v\nwant\n%+v", again, c)
	}
}

// TestPackagedConfigDocumentsEveryKey: /etc/lookahead/broker.yaml shows
// every key (set or as a commented-out example), and the examples are
// valid config too.
func TestPackagedConfigDocumentsEveryKey(t *testing.T) {
	if err := config.CheckDocumented(config.SchemaOf(Config{}), "../../packaging/config/broker.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestPackagedPolicyWarns: the packaged broker.yaml refuses every
// submission until the operator lists identities and budgets; the broker
// says so at start and in `config` instead of leaving the first user to
// find out from a refusal.
func TestPackagedPolicyWarns(t *testing.T) {
	cmd := subcommand("config")
	cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml"})
	_, l, err := readConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "identities is empty") || !strings.Contains(w, "default_budget is 0") {
		t.Fatalf("warnings %q", l.Warnings)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "b.yaml")
	os.WriteFile(file, []byte("identities: [{nats_user: '*', users: [alice], accounts: [proj1]}]\nbudgets: {default_budget: 0, accounts: {proj1: 10}}\n"), 0o600)
	cmd = subcommand("config")
	cmd.Flags().Parse([]string{"--config", file})
	_, l, err = readConfig(cmd.Flags())
	if w := strings.Join(l.Warnings, "\n"); err != nil || strings.Contains(w, "identities") || strings.Contains(w, "budget") {
		t.Fatalf("err %v warnings %q", err, l.Warnings)
	}
}

// Issue 23.4: a negative budget was the one broker config error without a
// file and line.
func TestNegativeBudgetNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"budgets:\n  default_budget: -5\n":                            ":2: budgets.default_budget: -5",
		"planning: {cycle: 30s}\nbudgets:\n  users:\n    alice: -1\n": ":4: budgets.users.alice: -1",
		"budgets:\n  accounts: {proj1: -3}\n":                         ":2: budgets.accounts.proj1: -3",
	} {
		file := filepath.Join(dir, "broker.yaml")
		os.WriteFile(file, []byte(body), 0o600)
		cmd := subcommand("run")
		cmd.Flags().Parse([]string{"--config", file})
		_, err := loadConfig(cmd.Flags())
		if err == nil || !strings.Contains(err.Error(), file+want) {
			t.Errorf("%q: %v, want %q", body, err, file+want)
		}
	}
}

// subcommand is the named command of the real tree with the root's
// persistent flags (--config, --nats-url, --log-level) merged into its
// Flags, as cobra does before parsing.
func subcommand(name string) *cobra.Command {
	sub, _, err := newRootCommand().Find([]string{name})
	if err != nil {
		panic(err)
	}
	sub.InheritedFlags()
	return sub
}

// Issue 23.6: the daemons show --config and --nats-url the same way: as
// global flags, persistent on the root, and not again per command.
func TestGlobalFlagsAreGlobal(t *testing.T) {
	root := newRootCommand()
	for _, name := range []string{"config", "nats-url", "log-level"} {
		if root.PersistentFlags().Lookup(name) == nil {
			t.Errorf("--%s is not a global flag", name)
		}
		for _, c := range root.Commands() {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				t.Errorf("%s declares --%s again", c.Name(), name)
			}
		}
	}
}

// Issue 23.6: config -o json was refused; -o table names where each key
// was set.
func TestConfigOutputFormats(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.yaml")
	os.WriteFile(file, []byte("planning:\n  cycle: 45s\n"), 0o600)
	for format, want := range map[string]string{"json": `"cycle": "45s"`, "table": file + ":2"} {
		root := newRootCommand()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		if err := cli.ExecuteArgs(context.Background(), root, []string{"config", "--config", file, "-o", format}); err != nil {
			t.Fatalf("config -o %s: %v", format, err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("config -o %s:\n%s\nwant %q", format, out.String(), want)
		}
	}
}
