package config

import (
	"bytes"
	"os"
	"testing"

	"github.com/spf13/viper"
)

// FuzzCheckFile: checking never panics, and a file the check accepts is
// one viper reads and decodes without an error (the check is at least as
// strict as the decoder, so a decode error never surprises a daemon).
func FuzzCheckFile(f *testing.F) {
	for _, p := range []string{"../../packaging/config/agent.yaml", "../../packaging/config/broker.yaml"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{"site: a\nintervals: {refresh: 60s}\n", "budgets: {users: {Alice: 1}}\n",
		"pricing: {rules: [{queue: a, multiplier: 2}], default: {multiplier: 1.5}}\n", "identities: [{nats_user: a, users: [x]}]\n",
		"a: &x {b: 1}\nc: *x\n", "tiers: [1, 2.5]\nreplicas: 0x10\n", "nats: {connect_timeout: 0}\n"} {
		f.Add([]byte(s))
	}
	schema := SchemaOf(testConfig{})
	f.Fuzz(func(t *testing.T, data []byte) {
		info, ps := checkFile(schema, "f.yaml", data)
		if len(ps) > 0 {
			return
		}
		v := viper.New()
		v.SetConfigType("yaml")
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			t.Fatalf("accepted, but viper cannot read it: %v\n%q", err, data)
		}
		var c testConfig
		if err := v.Unmarshal(&c, viper.DecodeHook(decodeHook())); err != nil {
			t.Fatalf("accepted, but it does not decode: %v\n%q", err, data)
		}
		for _, m := range info.maps {
			if err := setMap(&c, schema, m); err != nil {
				t.Fatalf("accepted, but map %s does not decode: %v\n%q", m.key, err, data)
			}
		}
	})
}
