package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Displace is decoded by its json tags, like the forecast package's types.
type Displace struct {
	Multiplier  float64 `json:"multiplier"`
	PerPriority float64 `json:"per_priority,omitempty"`
}

type Rule struct {
	Queue string `json:"queue,omitempty"`
	Displace
}

type Pricing struct {
	Base    float64   `json:"base" default:"1"`
	Default *Displace `json:"default"`
	Rules   []Rule    `json:"rules"`
}

type NATS struct {
	URL            string        `mapstructure:"url" default:"nats://127.0.0.1:4222"`
	ConnectTimeout time.Duration `mapstructure:"connect_timeout" default:"5s" min:"100ms"`
}

type Identity struct {
	NATSUser string   `mapstructure:"nats_user"`
	Users    []string `mapstructure:"users"`
}

type testConfig struct {
	Site      string `mapstructure:"site"`
	NATS      NATS   `mapstructure:"nats"`
	Intervals struct {
		Refresh  time.Duration `mapstructure:"refresh" default:"60s" min:"1s"`
		Debounce time.Duration `mapstructure:"debounce" default:"2s"`
	} `mapstructure:"intervals"`
	Horizon time.Duration `mapstructure:"horizon" default:"24h" min:"1m"`
	Budgets struct {
		Users   map[string]float64 `mapstructure:"users"`
		Default *float64           `mapstructure:"default_budget"`
	} `mapstructure:"budgets"`
	Identities []Identity `mapstructure:"identities"`
	Tiers      []float64  `mapstructure:"tiers"`
	Replicas   int        `mapstructure:"replicas" default:"1" min:"1" max:"5"`
	Pricing    Pricing    `mapstructure:"pricing"`
}

func load(t *testing.T, file string, flags []string, flagKeys map[string]string) (testConfig, *Loaded, error) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("horizon", "", "")
	fs.Duration("refresh", 0, "")
	fs.String("nats-url", "", "")
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	var c testConfig
	l, err := Load(viper.New(), &c, Spec{File: file, Explicit: true, EnvPrefix: "LATEST", Flags: fs, FlagKeys: flagKeys})
	return c, l, err
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultsFileEnvFlagsPrecedence(t *testing.T) {
	file := writeFile(t, "site: alpha\nhorizon: 12h\nnats: {url: nats://file:4222}\nintervals: {debounce: 3s}\n"+
		"budgets:\n  users: {Alice: 10, bob: 20, true: 1, 123: 2, 'yes': 3}\n  default_budget: 0\npricing:\n  base: 2\n  rules:\n    - {queue: low, multiplier: 3}\n")
	t.Setenv("LATEST_NATS_URL", "nats://env:4222")
	t.Setenv("LATEST_HORIZON", "6h")
	t.Setenv("LATEST_TIERS", "1,1.5")
	keys := map[string]string{"horizon": "horizon", "nats-url": "nats.url"}
	c, l, err := load(t, file, []string{"--horizon", "3h"}, keys)
	if err != nil {
		t.Fatal(err)
	}
	if c.Site != "alpha" || c.NATS.URL != "nats://env:4222" || c.Horizon != 3*time.Hour || c.Intervals.Debounce != 3*time.Second {
		t.Fatalf("site %q url %q horizon %v debounce %v: want file, env, flag, file", c.Site, c.NATS.URL, c.Horizon, c.Intervals.Debounce)
	}
	if c.Intervals.Refresh != time.Minute || c.NATS.ConnectTimeout != 5*time.Second || c.Replicas != 1 {
		t.Fatalf("defaults: refresh %v timeout %v replicas %d", c.Intervals.Refresh, c.NATS.ConnectTimeout, c.Replicas)
	}
	if u := c.Budgets.Users; u["Alice"] != 10 || u["bob"] != 20 || u["true"] != 1 || u["123"] != 2 || u["yes"] != 3 || len(u) != 5 {
		t.Fatalf("budgets.users %v: map keys must keep their case", c.Budgets.Users)
	}
	if c.Budgets.Default == nil || *c.Budgets.Default != 0 {
		t.Fatalf("default_budget %v: an explicit 0 is not unset", c.Budgets.Default)
	}
	if c.Pricing.Base != 2 || len(c.Pricing.Rules) != 1 || c.Pricing.Rules[0].Multiplier != 3 || c.Pricing.Rules[0].Queue != "low" {
		t.Fatalf("pricing %+v", c.Pricing)
	}
	if len(c.Tiers) != 2 || c.Tiers[1] != 1.5 {
		t.Fatalf("tiers from env: %v", c.Tiers)
	}
	for key, want := range map[string]string{"site": file + ":1", "nats.url": "LATEST_NATS_URL", "horizon": "--horizon", "replicas": "default"} {
		if got := l.Origin(key); got != want {
			t.Errorf("origin of %s: %q, want %q", key, got, want)
		}
	}
}

// problemsOf returns the problems of a failed load as "where|key|message".
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	var out []string
	for _, p := range e.Problems {
		out = append(out, p.Where+"|"+p.Key+"|"+p.Msg)
	}
	return out
}

func TestFileProblemsNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct{ body, where, key, msg string }{
		{"site: a\nintervals:\n  refresh: 60\n", ":3", "intervals.refresh", "60 has no unit"},
		{"intervals: {refresh: 1.5}\n", ":1", "intervals.refresh", "has no unit"},
		{"intervals: {refresh: \"90\"}\n", ":1", "intervals.refresh", "has no unit"},
		{"intervals: {refresh: soon}\n", ":1", "intervals.refresh", "not a duration"},
		{"budgets:\n  default_budjet: 0\n", ":2", "budgets.default_budjet", "did you mean budgets.default_budget?"},
		{"nats: {ulr: nats://elsewhere:4222}\n", ":1", "nats.ulr", "did you mean nats.url?"},
		{"Site: a\n", ":1", "Site", "did you mean site?"},
		{"zzz: 1\n", ":1", "zzz", "the keys here are site, nats,"},
		{"site: a\nsite: b\n", ":2", "site", "set twice (first at line 1)"},
		{"replicas: two\n", ":1", "replicas", "not an integer"},
		{"replicas: 1.5\n", ":1", "replicas", "not an integer"},
		{"replicas: 99999999999999999999\n", ":1", "replicas", "99999999999999999999 is out of range (at most 9223372036854775807)"},
		{"pricing: {base: .inf}\n", ":1", "pricing.base", "not a finite number"},
		{"pricing:\n  rules:\n    - {queue: a, multiplyer: 2}\n", ":3", "pricing.rules[0].multiplyer", "did you mean pricing.rules[0].multiplier?"},
		{"identities:\n  - nats_user: a\n    user: [x]\n", ":3", "identities[0].user", "did you mean identities[0].users?"},
		{"identities: {nats_user: a}\n", ":1", "identities", "must be a list"},
		{"nats: nats://x:4222\n", ":1", "nats", "must be a map"},
		{"site: [a, b]\n", ":1", "site", "must be a string, not a list"},
		{"budgets: {users: {alice: lots}}\n", ":1", "budgets.users.alice", "not a finite number"},
		{"site: a\n  bad indent: x\n", "", "", "not valid YAML"},
		{"site: a\n---\nsite: b\n", ":2", "", "a second YAML document"},
		{"site: a\n---\n", "", "", "a second YAML document"},
		{"site: a\n---\nsite: [b\n", "", "", "not valid YAML"},
		{"intervals: {refresh: 500ms}\n", "default", "intervals.refresh", "below the least allowed, 1s"},
		{"intervals: {refresh: -5s}\n", "", "intervals.refresh", "below the least allowed"},
		{"intervals: {debounce: -1s}\n", "", "intervals.debounce", "below the least allowed, 0s"},
		{"replicas: 0\n", "", "replicas", "below the least allowed, 1"},
		{"replicas: 7\n", "", "replicas", "7 is above the most allowed, 5"},
	} {
		file := writeFile(t, tc.body)
		_, _, err := load(t, file, nil, nil)
		if err == nil {
			t.Errorf("%q: accepted", tc.body)
			continue
		}
		ps := problemsOf(t, err)
		where := file + tc.where
		if tc.where == "default" {
			where = file + ":1" // the value's origin is the file line
		}
		found := false
		for _, p := range ps {
			found = found || strings.HasPrefix(p, where) && strings.Contains(p, "|"+tc.key+"|") && strings.Contains(p, tc.msg)
		}
		if !found {
			t.Errorf("%q: problems %q, want one at %s naming %q with %q", tc.body, ps, where, tc.key, tc.msg)
		}
	}
}

func TestEveryProblemAtOnce(t *testing.T) {
	file := writeFile(t, "nats: {ulr: x}\nintervals: {refresh: 60}\nbudgets: {default_budjet: 0}\n")
	_, _, err := load(t, file, nil, nil)
	if ps := problemsOf(t, err); len(ps) != 3 {
		t.Fatalf("problems %q, want all 3", ps)
	}
	if !strings.Contains(err.Error(), "3 problems") || !strings.Contains(err.Error(), file+":2: intervals.refresh") {
		t.Fatalf("message %q", err)
	}
}

func TestEnvAndFlagDurationsNeedUnits(t *testing.T) {
	t.Setenv("LATEST_INTERVALS_REFRESH", "60")
	keys := map[string]string{"horizon": "horizon", "refresh": "intervals.refresh"}
	_, _, err := load(t, "", []string{"--horizon", "48"}, keys)
	ps := strings.Join(problemsOf(t, err), "\n")
	for _, want := range []string{"LATEST_INTERVALS_REFRESH=60|intervals.refresh|60 has no unit", "--horizon 48|horizon|48 has no unit"} {
		if !strings.Contains(ps, want) {
			t.Errorf("problems %s\nlack %s", ps, want)
		}
	}
	t.Setenv("LATEST_INTERVALS_REFRESH", "2m")
	t.Setenv("LATEST_REPLICAS", "many")
	_, _, err = load(t, "", []string{"--horizon", "48h"}, keys)
	if ps := problemsOf(t, err); len(ps) != 1 || !strings.HasPrefix(ps[0], "LATEST_REPLICAS=many|replicas|") {
		t.Fatalf("problems %q", ps)
	}
}

func TestBoundsNameTheOrigin(t *testing.T) {
	t.Setenv("LATEST_INTERVALS_REFRESH", "1ns")
	_, _, err := load(t, "", nil, nil)
	if ps := problemsOf(t, err); len(ps) != 1 || ps[0] != "LATEST_INTERVALS_REFRESH|intervals.refresh|1ns is below the least allowed, 1s" {
		t.Fatalf("problems %q", ps)
	}
	_, _, err = load(t, "", []string{"--refresh", "0s"}, map[string]string{"refresh": "intervals.refresh"})
	if ps := problemsOf(t, err); len(ps) != 1 || !strings.HasPrefix(ps[0], "--refresh|intervals.refresh|0s is below") {
		t.Fatalf("problems %q", ps)
	}
}

// TestHugeFileIsRefusedUnread: a file larger than any config (a device,
// a log named by mistake) is bad input naming it, read no further than
// the bound — /dev/zero took the process's memory.
func TestHugeFileIsRefusedUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: takes no disk
		t.Fatal(err)
	}
	f.Close()
	var c testConfig
	_, err = Load(viper.New(), &c, Spec{File: path, Explicit: true})
	var bad interface{ BadInput() bool }
	if err == nil || !strings.Contains(err.Error(), path+": more than 16 MiB") || !errors.As(err, &bad) || !bad.BadInput() {
		t.Fatalf("a file of 16 MiB and a byte: %v, want bad input naming it", err)
	}
	if err := os.Truncate(path, MaxFileBytes); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path); err != nil || len(b) != MaxFileBytes {
		t.Fatalf("a file of 16 MiB: %d bytes, %v", len(b), err)
	}
}

func TestMissingFile(t *testing.T) {
	var c testConfig
	_, err := Load(viper.New(), &c, Spec{File: "/nonexistent/agent.yaml", Explicit: true})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("named missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Load(viper.New(), &c, Spec{File: "/nonexistent/agent.yaml"}); err != nil || c.Horizon != 24*time.Hour {
		t.Fatalf("default missing file: %v, horizon %v", err, c.Horizon)
	}
}

func TestStrayEnvironmentIsAWarning(t *testing.T) {
	t.Setenv("LATEST_NATS_ULR", "nats://x:1")
	_, l, err := load(t, "", nil, nil)
	if err != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "LATEST_NATS_ULR") {
		t.Fatalf("err %v warnings %q", err, l.Warnings)
	}
}

// A variable read by something else (ReadElsewhere) is not stray; a
// misspelling of it is.
func TestVariablesReadElsewhereAreNotStray(t *testing.T) {
	t.Setenv("LOOKAHEAD_NATS_ADMIN_PASSWORD", "secret")
	t.Setenv("LOOKAHEAD_NATS_ADMIN_PASWORD", "secret")
	var c testConfig
	l, err := Load(viper.New(), &c, Spec{EnvPrefix: "LOOKAHEAD"})
	if err != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "LOOKAHEAD_NATS_ADMIN_PASWORD ") {
		t.Fatalf("err %v warnings %q", err, l.Warnings)
	}
}

func TestKeysAndSuggest(t *testing.T) {
	keys := strings.Join(SchemaOf(testConfig{}).Keys(), " ")
	for _, want := range []string{"nats.url", "intervals.refresh", "budgets.users", "pricing.rules", "identities"} {
		if !strings.Contains(keys, want) {
			t.Errorf("keys %s lack %s", keys, want)
		}
	}
	for name, want := range map[string]string{"ulr": "url", "default_budjet": "default_budget", "URL": "url", "x": "", "refrsh": "refresh", "timeout": ""} {
		if got := suggest(name, []string{"url", "default_budget", "refresh", "name"}); got != want {
			t.Errorf("suggest(%q) = %q, want %q", name, got, want)
		}
	}
}
