// Package config loads the daemons' configuration strictly, the same way
// for lookahead-agent and lookahead-broker: flags > LOOKAHEAD_* environment
// > the YAML file > defaults, into a typed struct.
//
// The keys are the struct's: a field's `mapstructure` tag names it (a
// struct type without mapstructure tags, such as the forecast package's
// pricing types, is named and decoded by its `json` tags), `default:"…"`
// gives its default, `min:"…"` and `max:"…"` its bounds. Adding a key is
// adding one tagged field. What is not a key is an error:
//
//   - an unknown or misspelt key in the file, named with its file and line
//     and the nearest known key ("agent.yaml:12: nats.ulr: unknown key; did
//     you mean nats.url?");
//   - a duration without a unit (Go would read `refresh: 60` as 60 ns) in
//     the file, in a LOOKAHEAD_* variable or in a flag, naming where;
//   - a value of the wrong type (a word where a number goes, a list where a
//     map goes), a duplicate key, a non-finite number;
//   - a value outside its key's bounds, naming where the value came from.
//
// Every problem found is reported at once (Error lists them). Map keys
// keep their case (viper alone lower-cases them: budgets for user "Alice"
// would silently apply to "alice").
//
// The viper instance is the caller's (one per process, in cmd/); this
// package never reads global state except the process environment when
// Spec.Environ is nil.
package config
