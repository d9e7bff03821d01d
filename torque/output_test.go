package torque

import (
	"os"
	"path/filepath"
	"testing"
)

// LocateStream on the layouts Torque 6.1.3 left on the live stack
// (testdata/torque-6.1.3/live-output/README.md), rebuilt in a temporary
// home: delivered (at the -o path), kept in ~/.pbs_spool (pbs_mom sent
// SIGHUP), kept in the home directory (no ~/.pbs_spool), and nowhere.
func TestLocateStreamOnLiveLayouts(t *testing.T) {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	place := func(t *testing.T, home string, files ...string) {
		t.Helper()
		for _, f := range files {
			p := filepath.Join(home, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("out\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name, id string
		files    []string
		stderr   bool
		want     string
		where    Placement
	}{
		{"delivered (39.vm)", "39.vm", []string{"oF1.out", "oF1.err"}, false, "oF1.out", AtPath},
		{"kept in ~/.pbs_spool after SIGHUP (40.vm)", "40.vm", []string{".pbs_spool/40.vm.OU", ".pbs_spool/40.vm.ER"}, false, ".pbs_spool/40.vm.OU", InSpool},
		{"stderr kept in ~/.pbs_spool (40.vm)", "40.vm", []string{".pbs_spool/40.vm.OU", ".pbs_spool/40.vm.ER"}, true, ".pbs_spool/40.vm.ER", InSpool},
		{"kept in home without ~/.pbs_spool (33.vm)", "33.vm", []string{"33.vm.OU", "33.vm.ER"}, false, "33.vm.OU", InHome},
		{"nowhere", "41.vm", nil, false, "", NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			place(t, home, c.files...)
			path := "vm:" + home + "/oF1.out"
			if c.stderr {
				path = "vm:" + home + "/oF1.err"
			}
			got, where := LocateStream(exists, home, c.id, path, c.stderr)
			want := ""
			if c.want != "" {
				want = filepath.Join(home, c.want)
			}
			if got != want || where != c.where {
				t.Fatalf("got %q %v, want %q %v", got, where, want, c.where)
			}
		})
	}
	if LocalPath("vm:/home/alice/oG1.out") != "/home/alice/oG1.out" || LocalPath("/a:b") != "/a:b" {
		t.Error("LocalPath")
	}
}
