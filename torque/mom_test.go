package torque

import (
	"io"
	"os"
	"strings"
	"testing"
)

func openLiveOutput(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/torque-6.1.3/live-output/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// parseLive parses a live-output capture with parse, failing the test on
// an error.
func parseLive[T any](t *testing.T, name string, parse func(io.Reader) (T, error)) *T {
	t.Helper()
	v, err := parse(openLiveOutput(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return &v
}

// The live stack's pbs_mom (Torque 6.1.3 built with --disable-spool), its
// mom_priv/config without and with $spool_as_final_name or $usecp, and
// `momctl -d 3` of a fresh pbs_mom and of one sent SIGHUP (captured,
// testdata/torque-6.1.3/live-output/README.md): a fresh one delivers to
// the -o/-e paths (users with ~/.pbs_spool), one sent SIGHUP delivers
// nothing unless $usecp matches; $spool_as_final_name always holds.
func TestOutputDeliveryOnTheLiveStack(t *testing.T) {
	b, err := ParseMomAbout(openLiveOutput(t, "pbs_mom_about.out"))
	if err != nil || !b.DisableSpool || b.Package != "torque 6.1.3" {
		t.Fatalf("build %+v %v", b, err)
	}
	plain, final, usecp := parseLive(t, "mom_config", ParseMomConfig), parseLive(t, "mom_config_final_name", ParseMomConfig), parseLive(t, "mom_config_usecp", ParseMomConfig)
	fresh, hup := parseLive(t, "momctl_d3_fresh.out", ParseMomDiag), parseLive(t, "momctl_d3_after_hup.out", ParseMomDiag)
	if fresh.Host != "vm" || fresh.CopyCommand != "/usr/bin/scp -rpB" || fresh.Lost() || !hup.Lost() || hup.Host != "" || hup.CopyCommand != "" {
		t.Fatalf("momctl -d 3: fresh %+v, after SIGHUP %+v", fresh, hup)
	}
	for _, c := range []struct {
		name                 string
		cfg                  *MomConfig
		diag                 *MomDiag
		holds, known, copied bool
		why                  string
	}{
		{"recipe's mom, fresh", plain, fresh, true, false, true, "~/.pbs_spool"},
		{"recipe's mom, diag not known", plain, nil, true, false, true, "SIGHUP"},
		{"recipe's mom after SIGHUP", plain, hup, false, true, true, "until pbs_mom is restarted"},
		{"after SIGHUP with $usecp", usecp, hup, true, false, true, "*:/home /home"},
		{"$spool_as_final_name", final, hup, true, true, false, "$spool_as_final_name true"},
	} {
		d := Delivery(&b, c.cfg, c.diag)
		if d.Holds != c.holds || d.Known != c.known || d.Copied != c.copied || !strings.Contains(d.Why, c.why) {
			t.Errorf("%s: %+v, want holds %v known %v copied %v, why with %q", c.name, d, c.holds, c.known, c.copied, c.why)
		}
	}
	if d := Delivery(&b, nil, hup); !d.Holds || d.Known || d.Copied {
		t.Errorf("no mom config here: %+v, want not known", d)
	}
	spool := MomBuild{Configure: "'--prefix=/usr/local'"}
	if d := Delivery(&spool, plain, hup); !d.Holds || !d.Known || d.Copied {
		t.Errorf("a spool build: %+v", d)
	}
	if _, err := ParseMomAbout(strings.NewReader("Version: 6.1.3\n")); err == nil {
		t.Error("an --about without configure line was read")
	}
	if _, err := ParseMomDiag(strings.NewReader("Host: vm/vm   Version: 6.1.3\n")); err == nil {
		t.Error("a momctl -d 3 without Copy Command: line was read")
	}
}

func TestParseMomConfigBooleans(t *testing.T) {
	for in, want := range map[string]bool{
		"$spool_as_final_name true\n":                          true,
		"$spool_as_final_name Yes\n":                           true,
		"$spool_as_final_name 1\n$spool_as_final_name false\n": false,
		"$spool_as_final_name true\n$spool_as_final_name x\n":  true,
		"# $spool_as_final_name true\n":                        false,
		"$spool_as_final_name\n":                               false,
	} {
		c, err := ParseMomConfig(strings.NewReader(in))
		if err != nil || c.SpoolAsFinalName != want {
			t.Errorf("%q: %+v %v, want %v", in, c, err, want)
		}
	}
}
