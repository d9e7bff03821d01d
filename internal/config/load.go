package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Spec says where a daemon's configuration comes from.
type Spec struct {
	File      string            // the YAML file; "" reads none
	Explicit  bool              // the user named File: a missing file is an error
	EnvPrefix string            // "LOOKAHEAD": key nats.url is set by LOOKAHEAD_NATS_URL
	Flags     *pflag.FlagSet    // parsed flags; nil for none
	FlagKeys  map[string]string // flag name → the key it sets
	// Validate, when set, runs on the decoded config (even when a bound
	// was broken), so every problem is reported at once.
	Validate func() error
}

// Loaded says where each key's value came from.
type Loaded struct {
	origins map[string]string
	// Warnings are harmless oddities worth telling the admin, e.g. a
	// LOOKAHEAD_* variable that sets no key.
	Warnings []string
}

// Origin is where key's value came from: "--flag", "LOOKAHEAD_X",
// "file:line", or "default".
func (l *Loaded) Origin(key string) string {
	if o, ok := l.origins[key]; ok {
		return o
	}
	return "default"
}

// Load reads the configuration into out, a pointer to the config struct:
// flags > environment > file > defaults (the `default` tags), on v (a
// fresh viper, the process's one). It reports every problem at once as an
// *Error; a missing file it was told to read is an error wrapping
// fs.ErrNotExist.
func Load(v *viper.Viper, out any, s Spec) (*Loaded, error) {
	schema := SchemaOf(out)
	l := &Loaded{origins: map[string]string{}}
	var ps problems
	setDefaults(v, schema, &ps)
	info, err := readFile(v, schema, s, l, &ps)
	if err != nil {
		return l, err
	}
	bindEnv(v, schema, s.EnvPrefix, l, &ps)
	bindFlags(v, schema, s, l, &ps)
	if len(ps) > 0 {
		return l, ps.err()
	}
	if err := v.Unmarshal(out, viper.DecodeHook(decodeHook())); err != nil {
		ps.add(s.File, "", "%v", err)
		return l, ps.err()
	}
	for _, m := range info.maps {
		if err := setMap(out, schema, m); err != nil {
			ps.add(info.where(m.key), m.key, "%v", err)
		}
	}
	checkBounds(reflect.ValueOf(out).Elem(), schema.root, "", l, &ps)
	if s.Validate != nil {
		ps.addErrors(s.Validate(), l.placeOf)
	}
	return l, ps.err()
}

func setDefaults(v *viper.Viper, s *Schema, ps *problems) {
	for _, lf := range s.leaves() {
		if !lf.n.hasDef {
			continue
		}
		if err := checkScalar(lf.n.kind, lf.n.def, false); err != nil && lf.n.kind != kindSlice {
			ps.add("default", lf.key, "%v", err) // a bad tag: found by the first test
			continue
		}
		v.SetDefault(lf.key, typed(lf.n, lf.n.def))
	}
}

// readFile checks the file and hands it to viper.
func readFile(v *viper.Viper, s *Schema, spec Spec, l *Loaded, ps *problems) (fileInfo, error) {
	if spec.File == "" {
		return fileInfo{}, nil
	}
	data, err := ReadFile(spec.File)
	if err != nil {
		if !spec.Explicit && errors.Is(err, os.ErrNotExist) {
			return fileInfo{}, nil
		}
		return fileInfo{}, fmt.Errorf("config file: %w", err)
	}
	info, fps := checkFile(s, spec.File, data)
	*ps = append(*ps, fps...)
	if len(fps) > 0 {
		return info, nil
	}
	for key := range info.lines {
		l.origins[key] = info.where(key)
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		ps.add(spec.File, "", "%v", err)
	}
	return info, nil
}

// decodeHook is viper's (durations, comma lists) plus encoding/json for
// struct types that have json tags and no mapstructure tags.
func decodeHook() mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(jsonHook, mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToWeakSliceHookFunc(","))
}

// setMap decodes a map-valued key again from the file, so its keys keep
// their case.
func setMap(out any, s *Schema, m fileMap) error {
	fv, ok := fieldByKey(reflect.ValueOf(out).Elem(), s.root, m.key)
	if !ok {
		return nil
	}
	raw, err := plain(m.node)
	if err != nil {
		return err
	}
	fresh := reflect.New(fv.Type())
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: fresh.Interface(),
		WeaklyTypedInput: true, DecodeHook: decodeHook()})
	if err == nil {
		err = dec.Decode(raw)
	}
	if err != nil {
		return err
	}
	fv.Set(fresh.Elem())
	return nil
}
