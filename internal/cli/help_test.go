package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"lookahead/internal/cli"
	"lookahead/internal/natsembed"
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
	srv, err := natsembed.Start(natsembed.Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"lookahead", "status", "--nats-url", srv.ClientURL(), "--user-nats", "alice", "--timeout", "1s"}, "use --nats-user"},
		{[]string{"lookahead", "sites", "--nats-url", srv.ClientURL(), "--as", "alice"}, "use --nats-as"},
		{[]string{"lookahead-broker", "status", "--nats-url", srv.ClientURL(), "--wait", "100ms"}, "use --timeout"},
	} {
		out, code := run(t, bin, nil, tc.args...)
		if code != cli.ExitUnavailable || !strings.Contains(out, tc.says) {
			t.Errorf("%s: exit %d, want 3 (no broker) saying %q:\n%s", strings.Join(tc.args, " "), code, tc.says, out)
		}
	}
}
