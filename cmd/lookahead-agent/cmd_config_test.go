package main

import (
	"strings"
	"testing"
)

// Issue 23.6: `lookahead-agent config -o json` was refused (unknown
// shorthand flag: 'o'); -o table names where each key was set.
func TestConfigOutputFormats(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: alpha\nintervals:\n  refresh: 45s\n")
	for format, want := range map[string]string{"json": `"refresh": "45s"`, "table": file + ":3"} {
		out, err := execute(t, "config", "--config", file, "-o", format)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("config -o %s: %v\n%s\nwant %q", format, err, out, want)
		}
	}
	if _, err := execute(t, "config", "--config", file, "-o", "yaml"); err == nil {
		t.Error("config -o yaml accepted")
	}
}

// The agent's --config, --site, --log-level and --nats-url are global
// flags (as the broker's), not declared again per command.
func TestGlobalFlagsAreGlobal(t *testing.T) {
	root := newRootCommand()
	for _, name := range []string{"config", "site", "nats-url", "log-level"} {
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
