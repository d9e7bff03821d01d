package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"lookahead/internal/cli"
)

// helpTexts is every command's --help of the three binaries, by command
// line ("lookahead submit").
func helpTexts(t *testing.T, bin string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range []string{"lookahead", "lookahead-agent", "lookahead-broker"} {
		root, _ := run(t, bin, nil, b, "--help")
		out[b] = root
		list := root[strings.Index(root, "Available Commands:"):]
		list = list[:strings.Index(list, "\n\n")]
		for _, line := range strings.Split(list, "\n")[1:] {
			sub := strings.Fields(line)[0]
			if sub == "help" || sub == "completion" {
				continue
			}
			out[b+" "+sub], _ = run(t, bin, nil, b, sub, "--help")
		}
	}
	return out
}

// TestHelpDescribesSlurmToo: a help text that speaks of Torque or Maui
// also says what happens on a Slurm site.
func TestHelpDescribesSlurmToo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	for cmd, text := range helpTexts(t, binaries(t)) {
		usage := text[:max(strings.Index(text, "\nUsage:"), 0)] // the description, not the flags
		if regexp.MustCompile(`(?i)torque|maui|qsub|pbs_server`).MatchString(usage) && !strings.Contains(usage, "Slurm") {
			t.Errorf("%s --help names Torque/Maui and not Slurm:\n%s", cmd, usage)
		}
	}
}

// TestFlagNamesAreConsistent: the CLI's NATS connection flags are named
// as the daemons' nats.* keys (--nats-user, not --user-nats), every
// command waits for an answer with --timeout (not --wait); the former
// names still work, hidden, and say which to use.
func TestFlagNamesAreConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	flag := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)
	former := map[string]bool{"wait": true, "user-nats": true, "creds": true, "nkey": true, "tls-ca": true, "as": true, "js-domain": true, "inbox-prefix": true}
	for cmd, text := range helpTexts(t, bin) {
		for _, m := range flag.FindAllStringSubmatch(text, -1) {
			if former[m[1]] {
				t.Errorf("%s shows --%s: a former name", cmd, m[1])
			}
		}
	}
	url := natsServer(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"lookahead", "status", "--nats-url", url, "--user-nats", "alice", "--timeout", "1s"}, "use --nats-user"},
		{[]string{"lookahead", "sites", "--nats-url", url, "--as", "alice"}, "use --nats-as"},
		{[]string{"lookahead-broker", "status", "--nats-url", url, "--wait", "100ms"}, "use --timeout"},
	} {
		out, code := run(t, bin, nil, tc.args...)
		if code != cli.ExitUnavailable || !strings.Contains(out, tc.says) {
			t.Errorf("%s: exit %d, want 3 (no broker) saying %q:\n%s", strings.Join(tc.args, " "), code, tc.says, out)
		}
	}
}

// TestJSONModePrintsOnlyJSON: under -o json the configuration's warnings
// ("identities is empty") are JSON too, and only the commands that report
// on the configuration (config, check, run's log) tell them, not every
// command that reads it.
func TestJSONModePrintsOnlyJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	out, code := run(t, bin, nil, "lookahead-broker", "config", "-o", "json")
	dec := json.NewDecoder(strings.NewReader(out))
	values, warned := 0, false
	for {
		var v map[string]any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("config -o json: not only JSON (%v):\n%s", err, out)
		}
		values++
		warned = warned || strings.Contains(fmt.Sprint(v["warning"]), "identities is empty")
	}
	if code != 0 || values != 2 || !warned {
		t.Errorf("config -o json: exit %d, %d JSON values (want the config and the warning):\n%s", code, values, out)
	}
	out, _ = run(t, bin, nil, "lookahead-broker", "status", "-o", "json", "--nats-url", "nats://127.0.0.1:1")
	if strings.Contains(out, "warning") || !json.Valid([]byte(out)) {
		t.Errorf("status -o json: a warning, or not JSON:\n%s", out)
	}
}

// TestRootHelpSaysSettingsAndExitCodes: a new user's first --help of each
// binary says where its settings come from and which wins, that durations
// take a unit, what its exit codes mean and that data comes as -o json.
func TestRootHelpSaysSettingsAndExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	texts := helpTexts(t, binaries(t))
	for b, wants := range map[string][]string{
		"lookahead":        {"LOOKAHEAD_NATS_URL", "there is no config file", "Durations take a unit"},
		"lookahead-agent":  {"/etc/lookahead/agent.yaml (or --config)", "rising precedence", "durations without a unit", "`lookahead-agent config`", "Slurm"},
		"lookahead-broker": {"/etc/lookahead/broker.yaml (or --config)", "flags > LOOKAHEAD_* environment", "durations without", "`lookahead-broker config`"},
	} {
		for _, want := range append(wants, cli.ExitCodesHelp, "-o json") {
			if !strings.Contains(texts[b], want) {
				t.Errorf("%s --help lacks %q:\n%s", b, want, texts[b])
			}
		}
	}
}

// TestFlagHelpHasNoGoTypeNames: a flag's value is named for the user
// (--tiers speeds, --forecast file), not by pflag's Go type
// (float64Slice, stringArray), and an empty list shows no "(default [])".
func TestFlagHelpHasNoGoTypeNames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	goType := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--[a-z0-9-]+ \w*(Slice|Array)\b.*|\(default \[\]\)`)
	for cmd, text := range helpTexts(t, binaries(t)) {
		for _, m := range goType.FindAllString(text, -1) {
			t.Errorf("%s --help: %q", cmd, strings.TrimSpace(m))
		}
	}
}
