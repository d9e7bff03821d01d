package torque

import (
	"os"
	"strings"
	"testing"
)

// The live stack's pbs_mom (Torque 6.1.3 built with --disable-spool) and
// its mom_priv/config, without and with $spool_as_final_name (captured,
// testdata/torque-6.1.3/live-output/README.md): only with it did a job's
// -o/-e files appear.
func TestOutputDeliveryOnTheLiveStack(t *testing.T) {
	dir := "testdata/torque-6.1.3/live-output/"
	f, err := os.Open(dir + "pbs_mom_about.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := ParseMomAbout(f)
	if err != nil || !b.DisableSpool || b.Package != "torque 6.1.3" {
		t.Fatalf("build %+v %v", b, err)
	}
	read := func(name string) *MomConfig {
		t.Helper()
		f, err := os.Open(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c, err := ParseMomConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	plain, final := read("mom_config"), read("mom_config_final_name")
	if d := Delivery(&b, plain); d.Holds || !d.Known || !strings.Contains(d.Why, "<id>.OU") {
		t.Errorf("recipe's mom: %+v, want the paths not to hold", d)
	}
	if d := Delivery(&b, final); !d.Holds || !d.Known {
		t.Errorf("with $spool_as_final_name: %+v", d)
	}
	if d := Delivery(&b, nil); d.Holds || d.Known {
		t.Errorf("no mom config here: %+v, want not known, not holding", d)
	}
	spool := MomBuild{Configure: "'--prefix=/usr/local'"}
	if d := Delivery(&spool, plain); !d.Holds || !d.Known {
		t.Errorf("a spool build: %+v", d)
	}
	if _, err := ParseMomAbout(strings.NewReader("Version: 6.1.3\n")); err == nil {
		t.Error("an --about without configure line was read")
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
