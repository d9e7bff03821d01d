package swf

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// Unzipped passes plain text through and gunzips gzip data, saying which;
// a cut gzip header is an error.
func TestUnzipped(t *testing.T) {
	const text = "; MaxProcs: 8\n1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(text))
	w.Close()
	for name, c := range map[string]struct {
		in []byte
		gz bool
	}{"plain": {[]byte(text), false}, "gzip": {z.Bytes(), true}} {
		r, gz, err := Unzipped(bytes.NewReader(c.in))
		if err != nil || gz != c.gz {
			t.Fatalf("%s: gz %v err %v", name, gz, err)
		}
		if got, _ := io.ReadAll(r); string(got) != text {
			t.Errorf("%s: read %q", name, got)
		}
	}
	if _, gz, err := Unzipped(bytes.NewReader(z.Bytes()[:5])); !gz || err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("a cut gzip header: gz %v err %v", gz, err)
	}
}
