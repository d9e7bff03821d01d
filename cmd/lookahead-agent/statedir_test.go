package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureStateDirCreatesAMissingOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var", "lib", "lookahead", "agent")
	c := Config{Backend: "torque", StateDir: dir}
	created, err := ensureStateDir(c)
	if err != nil || !created {
		t.Fatalf("ensureStateDir = %v, %v; want created", created, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("state_dir not made: %v", err)
	}
	if created, err := ensureStateDir(c); err != nil || created {
		t.Fatalf("second call = %v, %v; want an existing directory left alone", created, err)
	}
}

func TestEnsureStateDirSaysWhatFailed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ensureStateDir(Config{Backend: "torque", StateDir: filepath.Join(file, "agent")})
	if err == nil || !strings.Contains(err.Error(), "state_dir") {
		t.Fatalf("err = %v; want one naming state_dir", err)
	}
}

func TestEnsureStateDirLeavesSimulatedSitesAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "unused")
	if created, err := ensureStateDir(Config{Backend: backendSimulated, StateDir: dir}); err != nil || created {
		t.Fatalf("simulated = %v, %v", created, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a simulated site's state_dir was made: %v", err)
	}
}
