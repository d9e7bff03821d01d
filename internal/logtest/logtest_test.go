package logtest

import (
	"fmt"
	"testing"
)

func TestDuplicateKeysFindsThem(t *testing.T) {
	dups, err := DuplicateKeys([]byte(`{"site":"a","x":{"k":1,"k":2},"site":"a","l":[{"m":1,"m":1}]}`))
	if err != nil || fmt.Sprint(dups) != "[k m site]" && fmt.Sprint(dups) != "[k site m]" {
		t.Fatalf("dups %v err %v", dups, err)
	}
	for _, line := range []string{`{"message":"a","x":{"y":1,"y":2}}`, `{"message":"a","code":"ok","message":"b"}`} {
		if dups, err := DuplicateKeys([]byte(line)); err != nil || len(dups) != 1 {
			t.Errorf("%s: dups %v err %v, want one", line, dups, err)
		}
	}
	if dups, err := DuplicateKeys([]byte(`{"message":"a","l":[{"k":1},{"k":2}]}`)); err != nil || len(dups) != 0 {
		t.Errorf("keys in sibling objects taken for duplicates: %v %v", dups, err)
	}
	if _, err := DuplicateKeys([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Error("trailing data accepted")
	}
}
