package torque

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAccountingEnds(t *testing.T) {
	// 6.1.3 fixture: 5.vm ran bound to reservation grid1.0 and ended (E, end=, Exit_status=0).
	got, err := AccountingEnds{Dir: "testdata/torque-6.1.3/accounting", Location: time.UTC}.Ends([]string{"5.vm", "999.vm"})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := got["5.vm"]; !ok || e.End != 1795317278 || e.ExitStatus == nil || *e.ExitStatus != 0 {
		t.Errorf("5.vm: %+v", got["5.vm"])
	}
	if _, ok := got["999.vm"]; ok || len(got) != 1 {
		t.Errorf("ends %+v, want only 5.vm", got)
	}
	// Live 6.1.3: 43.vm qdel'ed while running (D, then E with Exit_status=271).
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(live, "accounting-20261124-jobs42-45"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "20261124"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("11/24/2026 23:00:00;E;43.vm;end=1\n"), 0o644)
	got, err = AccountingEnds{Dir: dir, Location: time.UTC}.Ends([]string{"43.vm", "45.vm"})
	if err != nil {
		t.Fatal(err)
	}
	if e := got["43.vm"]; e.End != 1795557687 || e.ExitStatus == nil || *e.ExitStatus != 271 {
		t.Errorf("43.vm: %+v", e)
	}
	if e := got["45.vm"]; e.End != 1795557722 {
		t.Errorf("45.vm: %+v", e)
	}
	if _, err := (AccountingEnds{Dir: filepath.Join(dir, "missing")}).Ends([]string{"1.vm"}); err == nil {
		t.Error("missing directory: no error")
	}
}
