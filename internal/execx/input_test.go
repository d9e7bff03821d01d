package execx

import (
	"context"
	"testing"
)

func TestRunInputFeedsStdin(t *testing.T) {
	r := NewInput(Config{})
	res, err := r.RunInput(context.Background(), []byte("line one\nline two\n"), "wc", "-l")
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "2\n" {
		t.Fatalf("wc -l: %q exit %d err %v", res.Stdout, res.ExitCode, err)
	}
	// nil input is an empty stdin, never the caller's own.
	res, err = r.RunInput(context.Background(), nil, "wc", "-c")
	if err != nil || string(res.Stdout) != "0\n" {
		t.Fatalf("wc -c on nil input: %q %v", res.Stdout, err)
	}
}
