package config

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// EnvName is the variable that sets key: LOOKAHEAD_NATS_URL for nats.url.
func EnvName(prefix, key string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// bindEnv binds every scalar key to its variable and checks the values
// that are set. Keys of types decoded by encoding/json (pricing) are set
// from their variable typed, since a bound variable would arrive as a
// string; lists and durations of those have no variable.
func bindEnv(v *viper.Viper, s *Schema, prefix string, l *Loaded, ps *problems) {
	if prefix == "" {
		return
	}
	bound := map[string]bool{}
	for _, lf := range s.leaves() {
		if lf.n.json && (lf.n.kind == kindSlice || lf.n.kind == kindDuration) {
			continue
		}
		name := EnvName(prefix, lf.key)
		bound[name] = true
		if !lf.n.json {
			if err := v.BindEnv(lf.key, name); err != nil {
				ps.add(name, lf.key, "%v", err)
			}
		}
		val, ok := os.LookupEnv(name)
		if !ok || val == "" { // viper ignores empty variables
			continue
		}
		l.origins[lf.key] = name
		if err := checkEnvValue(lf.n, val); err != nil {
			ps.add(name+"="+val, lf.key, "%v", err)
		} else if lf.n.json {
			v.Set(lf.key, typed(lf.n, val))
		}
	}
	l.Warnings = append(l.Warnings, strayEnv(prefix, bound)...)
}

// checkEnvValue checks a variable's text; a list is comma-separated.
func checkEnvValue(n *node, val string) error {
	if n.kind != kindSlice {
		return checkScalar(n.kind, val, false)
	}
	for _, item := range strings.Split(val, ",") {
		if err := checkScalar(n.elem.kind, strings.TrimSpace(item), false); err != nil {
			return err
		}
	}
	return nil
}

// ReadElsewhere are the LOOKAHEAD_* variables that are not configuration
// keys but are read by something else on the same host, so a program
// does not call them stray: the one list of them.
var ReadElsewhere = map[string]bool{
	"LOOKAHEAD_NATS_ADMIN_PASSWORD": true, // lookahead-broker init --admin-user's password
	"LOOKAHEAD_NATS_SERVER":         true, // packaging/nats/cluster.conf's server_name
	"LOOKAHEAD_TOOLS":               true, // scripts/static-checks.sh's tool cache
}

// strayEnv lists variables with the prefix that set no key (a misspelt
// name would otherwise be ignored without a word).
func strayEnv(prefix string, bound map[string]bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix+"_") && !bound[name] && !ReadElsewhere[name] {
			out = append(out, fmt.Sprintf("%s is set but sets no key of this program's configuration; ignored", name))
		}
	}
	sort.Strings(out)
	return out
}

// bindFlags binds the flags that override keys and checks those given.
func bindFlags(v *viper.Viper, s *Schema, spec Spec, l *Loaded, ps *problems) {
	if spec.Flags == nil {
		return
	}
	names := make([]string, 0, len(spec.FlagKeys))
	for name := range spec.FlagKeys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := spec.FlagKeys[name]
		f := spec.Flags.Lookup(name)
		n := s.lookup(key)
		if f == nil {
			continue
		}
		if n == nil {
			ps.add("--"+name, key, "flag bound to an unknown key") // a programming error
			continue
		}
		if err := v.BindPFlag(key, f); err != nil {
			ps.add("--"+name, key, "%v", err)
		}
		if !f.Changed {
			continue
		}
		l.origins[key] = "--" + name
		if err := checkEnvValue(n, f.Value.String()); err != nil && f.Value.Type() != "stringSlice" {
			ps.add("--"+name+" "+f.Value.String(), key, "%v", err)
		}
	}
}

// typed is a default tag's text as the value viper should hold.
func typed(n *node, text string) any {
	switch n.kind {
	case kindBool:
		b, _ := strconv.ParseBool(text)
		return b
	case kindInt:
		i, _ := strconv.ParseInt(text, 0, 64)
		return i
	case kindUint:
		u, _ := strconv.ParseUint(text, 0, 64)
		return u
	case kindFloat:
		f, _ := strconv.ParseFloat(text, 64)
		return f
	case kindSlice:
		if text == "" {
			return []string{}
		}
		return strings.Split(text, ",")
	}
	return text
}
