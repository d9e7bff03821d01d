package cli_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badInput is one row of the table of bad inputs: the command line (its
// first word names the binary; {name} stands for a file holding in[name]),
// the exit code it must give and a substring of its output (stdout and
// stderr; {name} there too). A refusal (exit code other than 0) must not
// echo its input: at most maxRefusal bytes of output.
type badInput struct {
	code int
	says string
	cmd  string
	in   map[string]string
}

const maxRefusal = 2048

// files is the inputs of a row: name, content, name, content, ...
func files(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// seed reads a file of the repository; with replacements (old, new, ...)
// each old must occur in it.
func seed(path string, repl ...string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		panic(err)
	}
	s := string(b)
	for i := 0; i+1 < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			panic(path + ": no " + repl[i])
		}
		s = strings.Replace(s, repl[i], repl[i+1], 1)
	}
	return s
}

func snapshot(repl ...string) string { return seed("examples/snapshot/snapshot.json", repl...) }
func alpha(repl ...string) string    { return seed("examples/plan/alpha.json", repl...) }
func queue(repl ...string) string    { return seed("examples/plan/queue.json", repl...) }

// swf is a one-job SWF trace on 8 processors, fields replaced as given
// (1-based field number, value, ...).
func swf(repl ...string) string {
	f := strings.Fields("1 0 5 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1")
	for i := 0; i+1 < len(repl); i += 2 {
		n := 0
		for _, c := range repl[i] {
			n = n*10 + int(c-'0')
		}
		f[n-1] = repl[i+1]
	}
	return "; MaxProcs: 8\n" + strings.Join(f, " ") + "\n"
}

// gzipCut is a real trace slice gzipped and cut in the middle.
func gzipCut() string {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(seed("forecast/swf/testdata/KTH-SP2-1996-2.1-cln.head800.swf")))
	w.Close()
	return z.String()[:z.Len()/2]
}

const dead = "nats://127.0.0.1:1"

var (
	plan     = "lookahead plan --forecast {f} --jobs {q}"
	forecast = "lookahead forecast --snapshot {s}"
	simulate = "lookahead simulate --trace {t}"
	replay   = "lookahead replay --scenario {s}"
	good     = map[string]string{"f": alpha(), "q": queue(), "s": snapshot()}
)

// with is good (or another base) plus the given files.
func with(kv ...string) map[string]string {
	m := files(kv...)
	for k, v := range good {
		if _, set := m[k]; !set {
			m[k] = v
		}
	}
	return m
}

// badInputs: the table. Issue 23's fifteen cases first, then a spread over
// configs, forecasts, queues, pricing, snapshots, SWF traces and scenarios.
var badInputs = []badInput{
	// issue 23
	{2, "jobs[0] (101.alpha).walltime: 9223372036854775807", forecast + " -o json", with("s", snapshot(`"walltime": 7200`, `"walltime": 9223372036854775807`))},
	{2, "line 2: field 4 (run time): 9223372036854775000", simulate, files("t", swf("4", "9223372036854775000", "9", "9223372036854775000"))},
	{0, "1 slots clipped to its window", plan, with("f", alpha(`"start": 1763808800, "end": 1763866400`, `"start": 1763808800, "end": 1763960000`))},
	{0, "1 wholly outside it dropped", plan, with("f", alpha(`"start": 1763798000, "end": 1763866400`, `"start": 1763000000, "end": 1763010000`))},
	{0, "NODE", forecast + " --pricing {p}", with("p", "base: 2.0\n")},
	{2, "pricing rules[0]: ", forecast + " --pricing {p}", with("p", "base: 1\nrules: [{}]\n")},
	{2, "pricing base 1e+308", forecast + " --pricing {p}", with("p", "base: 1e308\n")},
	{2, "jobs {q}: decode jobs: invalid input: line 2, column 9: invalid character 'N'", plan, with("q", "[\n {\"id\": N}]\n")},
	{2, "forecast {f}: invalid input: slots[0].end: 2199023255552", plan, with("f", alpha(`"end": 1763794400`, `"end": 2199023255552`))},
	{2, "{c}:2: budgets.default_budget: -5", "lookahead-broker config --config {c}", files("c", "budgets:\n  default_budget: -5\n")},
	{2, "the file is truncated", simulate, files("t", gzipCut())},
	{0, `1 jobs in a state Torque does not have, taken as running (holding their processors): 103.alpha (state "Z")`, forecast, with("s", snapshot(`"state": "Q", "procs": 8`, `"state": "Z", "procs": 8`))},
	{0, `"site": "alpha"`, "lookahead-agent config --site alpha -o json", nil},
	{3, "1 of 4 checks failed: a service could not be reached", "lookahead-broker check --nats-url " + dead, nil},
	{2, "…(100000 bytes)", "lookahead submit --procs 1 --walltime 1h --max-price 1 --user " + strings.Repeat("A", 100_000), nil},
	{2, `"exit_code": 2`, plan + " -o json", with("q", "[{]")},
	// the CLI's own limits and shapes
	{0, `"cycle": "30s"`, "lookahead-broker config -o json", nil},
	{3, "could not be reached", "lookahead-agent check --site a --skip torque,logs,state,maui,forecast --nats-url " + dead, nil},
	{2, `"kind": "usage"`, "lookahead-broker config -o json --config {c}", files("c", "planning: {cycle: 30}\n")},
	{2, "--procs 100000000: must lie in [1, 1048576]", simulate + " --procs 100000000", files("t", swf())},
	{2, "--horizon 2000000h: must be whole seconds", forecast + " --horizon 2000000h", good},
	{2, "--now -5: must lie in", forecast + " --now -5", good},
	{2, "forecast {b}: site \"alpha\" duplicates forecast {f}", plan + " --forecast {b}", with("b", alpha())},
	{2, "--not-before -5: must lie in", plan + " --not-before -5", good},
	{2, "--staging-delay 2000000h: must be whole seconds", plan + " --staging-delay 2000000h", good},
	// configs
	{2, "{c}:1: nats.ulr: unknown key; did you mean nats.url?", "lookahead-agent config --site a --config {c}", files("c", "nats: {ulr: x}\n")},
	{2, "did you mean planning.cycle?", "lookahead-broker config --config {c}", files("c", "planning: {cylce: 30s}\n")},
	{2, "{c}:1: nats.js_domain:", "lookahead-agent config --site a --config {c}", files("c", "nats: {js_domain: a.b}\n")},
	{2, "{c}:1: nats.js_domain:", "lookahead-broker check --config {c}", files("c", "nats: {js_domain: a.b}\n")},
	{2, `--nats-js-domain (or LOOKAHEAD_NATS_JS_DOMAIN): "g*": a domain is one subject token`, "lookahead status --nats-js-domain g* --nats-url " + dead, nil},
	{2, "{c}:3: budgets.accounts.p1: -3", "lookahead-broker check --config {c}", files("c", "log_level: info\nbudgets:\n  accounts: {p1: -3}\n")},
	{2, "{c}:2: intervals.refresh: 60 has no unit", "lookahead-agent config --config {c}", files("c", "site: a\nintervals: {refresh: 60}\n")},
	// forecasts
	{2, "forecast version 2", plan, with("f", alpha(`"version": 1`, `"version": 2`))},
	{2, "slots[0].node: unknown node \"zz\"", plan, with("f", alpha(`"node": "a01"`, `"node": "zz"`))},
	{2, "line 10, column 87: json: cannot unmarshal string", plan, with("f", alpha(`"price": 1.0}`, `"price": "one"}`))},
	{2, `unknown field "colour"`, plan, with("f", alpha(`"seq": 42`, `"seq": 42, "colour": "red"`))},
	{2, "nodes[0].speed: 1e-300", plan, with("f", alpha(`"speed": 1.0`, `"speed": 1e-300`))},
	{2, "slots[0].price: 1e+300", plan, with("f", alpha(`"price": 1.0`, `"price": 1e300`))},
	// queues
	{2, `id "g1" duplicates jobs[0]`, plan, with("q", queue(`"id": "g2"`, `"id": "g1"`))},
	{2, `criterion "soonest"`, plan, with("q", queue(`"earliest-finish"`, `"soonest"`))},
	{2, "jobs[0]: invalid input: job g1: walltime 9223372036854775000", plan, with("q", queue(`"walltime": 7200`, `"walltime": 9223372036854775000`))},
	{2, "job g1: max_price 1e+308", plan, with("q", queue(`"max_price": 2.0`, `"max_price": 1e308`))},
	{2, "job g1: procs 2000000000", plan, with("q", queue(`"procs": 48`, `"procs": 2000000000`))},
	// pricing
	{2, "pricing default: invalid input: multiplier 0.5", forecast + " --pricing {p}", with("p", "default: {multiplier: 0.5}\n")},
	{2, "pricing file {p}: line 2: bogus: unknown key (known here: base, default, rules)", forecast + " --pricing {p}", with("p", "base: 1\nbogus: 2\n")},
	{2, "max 1e+300", forecast + " --pricing {p}", with("p", "default: {multiplier: 2, max: 1e300}\n")},
	// snapshots
	{2, "snapshot nodes[1].name: duplicate node \"n01\"", forecast, with("s", snapshot(`"name": "n02"`, `"name": "n01"`))},
	{2, "hosts[0]: unknown node \"n99\"", forecast, with("s", snapshot(`"hosts": [{"node": "n01"`, `"hosts": [{"node": "n99"`))},
	{2, "(101.alpha).started: -1", forecast, with("s", snapshot(`"started": 1763778200`, `"started": -1`))},
	{2, "snapshot taken 9223372036854775807", forecast, with("s", snapshot(`"taken": 1763780000`, `"taken": 9223372036854775807`))},
	{2, "line 1, column 1: invalid character", forecast, with("s", "}{")},
	// SWF traces
	{2, "line 2: 17 fields, want 18", simulate, files("t", strings.Replace(swf(), " -1\n", "\n", 1))},
	{2, `no usable job record: all 1 records left out; e.g. line 2: field 5: "four" is not a number`, simulate, files("t", swf("5", "four"))},
	{0, "left out 1 of 2 records (1 malformed lines, 0 whose processors or run time the archive marks missing); e.g. line 3: submit time 0 is before the previous record's 50", simulate, files("t", swf("2", "50")+swf("1", "2")[len("; MaxProcs: 8\n"):])},
	{2, "the trace has no MaxProcs header", simulate, files("t", swf()[len("; MaxProcs: 8\n"):])},
	{2, "line 2: field 8 (requested processors): 100000000", simulate, files("t", swf("8", "100000000"))},
	// scenarios
	{2, "line 3: bogus: unknown key", replay, files("s", "name: x\nseed: 1\nbogus: 1\n")},
	{2, "sites[0].nodes: must be positive, got -3", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: -3}\n")},
	// issue 38: what slipped through
	{2, "{c}:3: torque.speeds.n001: -1, must lie in [0.001, 1000]", agentConfig, files("c", "site: a\ntorque:\n  speeds: {n001: -1}\n")},
	{2, "{c}:3: torque.nodes.n001.speed: 5000, must lie in [0.001, 1000]", agentConfig, files("c", "site: a\ntorque:\n  nodes: {n001: {speed: 5000}}\n")},
	{2, "{c}:3: torque.default_speed: 5000 is above the most allowed, 1000", agentConfig, files("c", "site: a\ntorque:\n  default_speed: 5000\n")},
	{2, `{c}:4: simulated.features[0]: "a b": must be a plain name`, agentConfig, files("c", "site: a\nbackend: simulated\nsimulated:\n  features: [\"a b\"]\n")},
	{2, `nodes[0].features[0]: "i b": must be a plain name`, plan, with("f", alpha(`"features": ["ib"]`, `"features": ["i b"]`))},
	{2, `{c}:3: reservations.prefix: "": must be a plain name`, agentConfig, files("c", "site: a\nreservations:\n  prefix: \"\"\n")},
	{2, `{c}:3: nats.urls: "nats//nats1:4222": want scheme://host:port`, agentConfig, files("c", "site: a\nnats:\n  urls: [\"nats//nats1:4222\"]\n")},
	{2, `{c}:2: nats.urls: "nats://nats1": no port`, brokerConfig, files("c", "nats:\n  urls: [nats://nats1]\n")},
	{2, "{c}:2: planning.tiers[1]: -2, must be a number > 0", brokerConfig, files("c", "planning:\n  tiers: [1.0, -2.0]\n")},
	{2, "speed NaN: must be between 1 and 10000", "lookahead demo --speed NaN", nil},
	{2, `--progress "sometimes": must be auto, always or never`, simulate + " --progress sometimes", files("t", swf())},
	{2, "--jobs -1: must be >= 0", simulate + " --jobs -1", files("t", swf())},
	{2, "is a directory", "lookahead submit --procs 1 --walltime 1h --max-price 1 --script /", nil},
	{2, `scenario {s}: invalid scenario: sites[1].name: "c2 west": must be a plain name`, replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: c1, nodes: 2}\n  - {name: \"c2 west\", nodes: 2}\n")},
	{2, `scenario {s}: plot.from: duration "soon"`, replay, files("s", "name: x\nseed: 1\nplot: {from: soon}\n")},
	{2, "web.token_file: stat /nonexistent/web.token: no such file", "lookahead-broker run --nats-url " + dead + " --config {c}", files("c", "state_dir: /nonexistent\nweb: {listen: \"127.0.0.1:0\", token_file: /nonexistent/web.token}\n")},
	{2, "at least 16 characters", "lookahead-broker run --nats-url " + dead + " --config {c}", files("c", "web: {listen: \"127.0.0.1:0\", token_file: \"{t}\"}\n", "t", "abc\n")},
	{2, "web.tls_cert_file {x}", "lookahead-broker run --nats-url " + dead + " --config {c}", files("c", "web: {listen: \"127.0.0.1:0\", tls_cert_file: \"{x}\", tls_key_file: \"{x}\"}\n", "x", "not PEM\n")},
	{1, "web.tls_cert_file {x}, web.tls_key_file {x}: tls: failed to find any PEM data", "lookahead-broker check --nats-url " + dead + " --config {c}", files("c", "web: {listen: \"127.0.0.1:0\", tls_cert_file: \"{x}\", tls_key_file: \"{x}\"}\n", "x", "not PEM\n")},
	{2, "web.token_file: stat /nonexistent/web.token: no such file", brokerConfig, files("c", "web: {listen: \"127.0.0.1:0\", token_file: /nonexistent/web.token}\n")},
	{2, "{c}:1: replicas: 7 is above the most allowed, 5", brokerConfig, files("c", "replicas: 7\n")},
	{2, `slots[6]: with the slots it overlaps at 1763787200, node "a03" offers 9 processors, it has 8`, plan, with("f", alpha(`"procs": 4, "start": 1763787200`, `"procs": 5, "start": 1763787200`))},
	{2, "trace {t}: no job records (0 bytes)", simulate + " --procs 8", files("t", "")},
	{2, "--seeds 0: must lie in [1, 1000]", replay + " --seeds 0", files("s", "name: x\nseed: 1\n")},
	// issue 38, the second look: new bad inputs of the same kinds
	{2, `{c}:3: torque.speeds: node name "": 1-255 bytes without spaces`, agentConfig, files("c", "site: a\ntorque:\n  speeds: {\"\": 2}\n")},
	{2, "simulated.nodes: 100000000: at most 10000", agentConfig, files("c", "site: a\nbackend: simulated\nsimulated: {nodes: 100000000}\n")},
	{2, "simulated.ppn: 100000000: at most 16777216", agentConfig, files("c", "site: a\nbackend: simulated\nsimulated: {ppn: 100000000}\n")},
	{2, "simulated.mem_mb: 999999999999999: at most", agentConfig, files("c", "site: a\nbackend: simulated\nsimulated: {mem_mb: 999999999999999}\n")},
	{2, "{c}:2: horizon: 2000000h: at most 1193046h28m16s", agentConfig, files("c", "site: a\nhorizon: 2000000h\n")},
	{2, "{c}:2: state_dir: empty", agentConfig, files("c", "site: a\nstate_dir: \"\"\n")},
	{2, `pricing rules[0].queue "a b": must be a plain name`, forecast + " --pricing {p}", with("p", "base: 1\nrules: [{queue: \"a b\", multiplier: 2}]\n")},
	{2, `{c}:1: budgets.users: "bad user": not a plain name`, brokerConfig, files("c", "budgets: {users: {\"bad user\": 5}}\n")},
	{2, "{c}:1: identities[0].users: empty, so alice may submit for no one", brokerConfig, files("c", "identities: [{nats_user: alice, users: []}]\n")},
	{2, "{c}:1: planning.multi_site_factor: 1e+308 is above the most allowed, 100", brokerConfig, files("c", "planning: {multi_site_factor: 1e308}\n")},
	{2, "multi-site factor 1e+308: must be 0 (none) or lie in [1, 100]", plan + " --multi-site-factor 1e308", good},
	{2, "--walltime 500ms: must be whole seconds, at least 1s", "lookahead submit --procs 1 --walltime 500ms --max-price 1 --nats-url " + dead, nil},
	{2, "--walltime 1m30.5s: must be whole seconds", "lookahead submit --procs 1 --walltime 90500ms --max-price 1 --nats-url " + dead, nil},
	{2, "--timeout 0s: must be > 0", "lookahead status --timeout 0 --nats-url " + dead, nil},
	{2, "--timeout -1s: must be > 0", "lookahead-agent status --site a --timeout -1s --nats-url " + dead, nil},
	{2, "--timeout 0s: must be > 0", "lookahead-broker status --timeout 0 --nats-url " + dead, nil},
	{2, `job id "a/b": not a plain name`, "lookahead cancel a/b --nats-url " + dead, nil},
	{2, `job id "g1;rm": not a plain name`, "lookahead status g1;rm --nats-url " + dead, nil},
	{2, `--source "bogus": want some of server_logs, accounting, sched_port`, "lookahead-agent events --site a --source bogus", nil},
	{2, `--skip "bogus": want some of torque,`, "lookahead-agent check --site a --skip bogus", nil},
	{2, "--poll 100000000000000: must lie in [0, 4294967296] seconds", simulate + " --poll 100000000000000", files("t", swf())},
	{2, "--seed 0: must be at least 1", "lookahead demo --seed 0", nil},
	{2, `nodes[0].name "a 01": a host name has no spaces`, plan, with("f", alpha(`"name": "a01"`, `"name": "a 01"`))},
	{2, `snapshot nodes[0].name "n 01": a host name has no spaces`, forecast, with("s", snapshot(`"name": "n01"`, `"name": "n 01"`))},
	{2, `job g3: features[0]: "i b": must be a plain name`, plan, with("q", queue(`"features": ["ib"]`, `"features": ["i b"]`))},
	{2, "scenario {s}: invalid scenario: sites[0].speed: 5000 (from speed or 1/heterogeneity): must lie in [0.001, 1000]", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2, speed: 5000}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\n")},
	{2, "sites[0].speed: 1e-06 (from speed or 1/heterogeneity)", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2, heterogeneity: 1000000}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\n")},
	{2, "sites[0].nodes: at most 10000 (a forecast's nodes), got 2000000", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2000000}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\n")},
	{2, "sites[0].ppn: at most 16777216, got 100000000", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2, ppn: 100000000}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\n")},
	{2, "forecast.horizon: must lie in [1, 4294967296] seconds, got 7200000000", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\nforecast: {horizon: 2000000h}\n")},
	{2, "grid.synthetic: need 0 < run_min ≤ run_max ≤ 4294967296, got [10, 99999999999]", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 99999999999, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\n")},
	{2, "plot: from and length must not be negative, got 0 and -5", replay, files("s", "name: x\nseed: 1\nsites:\n  - {name: a, nodes: 2}\ngrid: {synthetic: {jobs: 3, run_min: 10, run_max: 30, classes: [{name: s, min: 1, max: 2, share: 1}]}}\npolicies: [lookahead]\nplot: {length: -5}\n")},
	// a new user's and an admin's black-box pass: the flag or key named, not a server blamed
	{2, "--nats-creds (or LOOKAHEAD_NATS_CREDS): open /nonexistent/u.creds: no such file", "lookahead status --nats-creds /nonexistent/u.creds --nats-url " + dead, nil},
	{2, "--nats-tls-ca (or LOOKAHEAD_NATS_TLS_CA): /: is a directory (want a file)", "lookahead submit --procs 1 --walltime 1h --nats-tls-ca / --nats-url " + dead, nil},
	{2, "--nats-nkey-seed (or LOOKAHEAD_NATS_NKEY_SEED): open /nonexistent/u.nk", "lookahead sites --nats-nkey-seed /nonexistent/u.nk --nats-url " + dead, nil},
	{2, `--nats-url (or LOOKAHEAD_NATS_URL): "::::"`, "lookahead status --nats-url ::::", nil},
	{2, "nats.creds: open /nonexistent/a.creds: no such file", "lookahead-agent status --site a --nats-url " + dead + " --config {c}", files("c", "nats: {creds: /nonexistent/a.creds}\n")},
	{1, "fix nats.tls_ca in the configuration", "lookahead-broker check --nats-url " + dead + " --config {c}", files("c", "nats: {tls_ca: /}\n")},
	{2, "{c}:2: a second YAML document", brokerConfig, files("c", "planning: {cycle: 30s}\n---\nplanning: {cycle: 5s}\n")},
	{2, "{c}:2: a second YAML document", agentConfig, files("c", "site: a\n---\nsite: b\n")},
	{2, "site: required; set site: in {c},", agentConfig, files("c", "log_level: info\n")},
	{2, "--procs: invalid input: job: procs -3, must lie in [1, 16777216]", "lookahead submit --procs -3 --walltime 1h --nats-url " + dead, nil},
	{2, "--procs: invalid input: job: procs 0, must lie in", "lookahead submit --procs 0 --walltime 1h --nats-url " + dead, nil},
	{2, "--max-price: invalid input: job: max_price NaN", "lookahead submit --procs 1 --walltime 1h --max-price NaN --nats-url " + dead, nil},
	{2, `--feature: invalid input: job: features[0]: "a=b": must be a plain name`, "lookahead submit --procs 1 --walltime 1h --feature a=b --nats-url " + dead, nil},
	{2, "job file {j}: invalid input: job: procs -3", "lookahead submit {j} --nats-url " + dead, files("j", `{"procs": -3, "walltime": 60}`)},
	{2, "--admin-creds: open /nonexistent/admin.creds: no such file", "lookahead-broker init --nats-url " + dead + " --admin-creds /nonexistent/admin.creds", nil},
	{2, "one of --admin-creds, --admin-nkey or --admin-user (2 given)", "lookahead-broker init --nats-url " + dead + " --admin-creds {x} --admin-user a", files("x", "x")},
	{2, `--start: tail start "middle"`, "lookahead-agent events --site a --start middle", nil},
	{2, "{c}:2: simulated.nodes: 99999999999999999999999 is out of range", agentConfig, files("c", "site: a\nsimulated: {nodes: 99999999999999999999999}\n")},
	{2, "config file: /dev/zero: more than 16 MiB", "lookahead-broker config --config /dev/zero", nil},
	{2, "pricing file: /dev/zero: more than 16 MiB", forecast + " --pricing /dev/zero", good},
	{2, "scenario: /dev/zero: more than 16 MiB", "lookahead replay --scenario /dev/zero", nil},
	{2, "--limit -1: must be >= 0", "lookahead audit log --limit -1 --nats-url " + dead, nil},
	{2, `--site "a/b": not a plain name`, "lookahead audit log --site a/b --nats-url " + dead, nil},
	{2, `--job: job id "a/b": not a plain name`, "lookahead audit log --job a/b --nats-url " + dead, nil},
	{2, "--nats-tls-key (or LOOKAHEAD_NATS_TLS_KEY): missing: a client certificate and its key go together", "lookahead status --nats-tls-cert /nonexistent/c.pem --nats-url " + dead, nil},
	{2, "pricing file {p}: empty: nothing in it", forecast + " --pricing {p}", with("p", "")},
	{2, "pricing file {p}: more than one YAML document (---)", forecast + " --pricing {p}", with("p", "base: 1\n---\nbase: 5\n")},
	{2, "pricing file {p}: line 3: rules[0].multiplyer: unknown key (known here: account, max,", forecast + " --pricing {p}", with("p", "base: 1\nrules:\n  - {queue: a, multiplyer: 2}\n")},
	{2, `pricing file {p}: base: line 1: got the text "cheap", want a number`, forecast + " --pricing {p}", with("p", "base: cheap\n")},
}

var (
	agentConfig  = "lookahead-agent config --config {c}"
	brokerConfig = "lookahead-broker config --config {c}"
)

// TestBadInputs runs every row of the table with the real binaries.
func TestBadInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := binaries(t)
	for i, c := range badInputs {
		dir := t.TempDir()
		expand := func(s string) string {
			for name := range c.in {
				s = strings.ReplaceAll(s, "{"+name+"}", filepath.Join(dir, name))
			}
			return s
		}
		for name, body := range c.in {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(expand(body)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		args := strings.Fields(expand(c.cmd))
		out, code := run(t, bin, []string{"HOME=" + dir}, args...)
		says := expand(c.says)
		short := strings.Join(args, " ")
		if len(short) > 200 {
			short = short[:200] + "…"
		}
		if code != c.code || !strings.Contains(out, says) {
			t.Errorf("row %d, %s: exit %d, want %d; output must contain %q:\n%.3000s", i, short, code, c.code, says, out)
		}
		if code != 0 && len(out) > maxRefusal {
			t.Errorf("row %d, %s: a refusal of %d bytes (at most %d): it echoes its input", i, short, len(out), maxRefusal)
		}
	}
}
