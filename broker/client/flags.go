package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/internal/natsconn"
)

// Conn is how the CLI reaches NATS and who it says it is. Flags override
// the LOOKAHEAD_NATS_* environment.
type Conn struct {
	NATS    natsconn.Config
	Timeout time.Duration
	// As is the NATS user name the broker's permissions know this client
	// by (default: the --nats-user name).
	As string
}

// Bind adds the connection flags to fs, named as the daemons' config
// keys: --nats-url, --nats-creds, --nats-nkey-seed, --nats-user (password
// in LOOKAHEAD_NATS_PASSWORD), --nats-tls-ca, --nats-tls-cert,
// --nats-tls-key, --nats-as, --nats-js-domain, --nats-inbox-prefix,
// defaulting from LOOKAHEAD_NATS_URL, _CREDS, _NKEY_SEED, _USER, _TLS_CA,
// _TLS_CERT, _TLS_KEY, _AS, _JS_DOMAIN and _INBOX_PREFIX (a token
// from LOOKAHEAD_NATS_TOKEN), and --timeout. The flags' former names
// (--creds, --nkey, --user-nats, --tls-ca, --as, --js-domain,
// --inbox-prefix) still work, hidden.
func (c *Conn) Bind(fs *pflag.FlagSet) {
	env := func(k, def string) string {
		boundEnv["LOOKAHEAD_NATS_"+k] = true
		if v := os.Getenv("LOOKAHEAD_NATS_" + k); v != "" {
			return v
		}
		return def
	}
	c.NATS.Password = env("PASSWORD", "")
	c.NATS.Token = env("TOKEN", "")
	fs.StringVar(&c.NATS.URL, "nats-url", env("URL", "nats://127.0.0.1:4222"), "NATS server URL (env LOOKAHEAD_NATS_URL)")
	fs.StringVar(&c.NATS.Creds, "nats-creds", env("CREDS", ""), "NATS credentials file (env LOOKAHEAD_NATS_CREDS)")
	fs.StringVar(&c.NATS.NKeySeed, "nats-nkey-seed", env("NKEY_SEED", ""), "NATS nkey seed file (env LOOKAHEAD_NATS_NKEY_SEED)")
	fs.StringVar(&c.NATS.User, "nats-user", env("USER", ""), "NATS user name; submissions carry it to the broker (env LOOKAHEAD_NATS_USER; password in LOOKAHEAD_NATS_PASSWORD)")
	fs.StringVar(&c.NATS.TLSCA, "nats-tls-ca", env("TLS_CA", ""), "CA certificate to pin for TLS (env LOOKAHEAD_NATS_TLS_CA)")
	fs.StringVar(&c.NATS.TLSCert, "nats-tls-cert", env("TLS_CERT", ""), "client certificate, for a server that verifies clients' (tls verify: true; with --nats-tls-key; env LOOKAHEAD_NATS_TLS_CERT)")
	fs.StringVar(&c.NATS.TLSKey, "nats-tls-key", env("TLS_KEY", ""), "the client certificate's key (env LOOKAHEAD_NATS_TLS_KEY)")
	fs.StringVar(&c.As, "nats-as", env("AS", ""), "NATS user name to act as on the broker's submit/cancel subjects, when authenticating by creds or nkey (env LOOKAHEAD_NATS_AS)")
	fs.StringVar(&c.NATS.JSDomain, "nats-js-domain", env("JS_DOMAIN", ""), "the grid's JetStream domain, needed to read the audit trail through a leaf node (env LOOKAHEAD_NATS_JS_DOMAIN)")
	fs.StringVar(&c.NATS.InboxPrefix, "nats-inbox-prefix", env("INBOX_PREFIX", ""), "prefix of reply subjects; default _INBOX_<user> when a NATS user (or --nats-as) is given, as the reference grid.conf allows (env LOOKAHEAD_NATS_INBOX_PREFIX)")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "how long to wait for the broker")
	for old, name := range map[string]string{"creds": "nats-creds", "nkey": "nats-nkey-seed", "user-nats": "nats-user",
		"tls-ca": "nats-tls-ca", "as": "nats-as", "js-domain": "nats-js-domain", "inbox-prefix": "nats-inbox-prefix"} {
		AliasFlag(fs, old, name)
	}
}

// boundEnv is the LOOKAHEAD_NATS_* variables Bind reads.
var boundEnv = map[string]bool{}

// StrayEnv says which LOOKAHEAD_NATS_* variables are set but read by no
// Bind nor elsewhere (a daemon's key the CLI has no flag for, as
// LOOKAHEAD_NATS_URLS, or a misspelt name): without a word the CLI would go
// to its default server. (This package takes elsewhere as a value: the web
// view imports it and must not carry the configuration loader.)
func StrayEnv(elsewhere map[string]bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LOOKAHEAD_NATS_") && !boundEnv[name] && !elsewhere[name] {
			out = append(out, fmt.Sprintf("%s is set but this command reads no such variable; ignored (it reads %s)", name, strings.Join(sortedKeys(boundEnv), ", ")))
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AliasFlag adds old, a former name of the flag name of fs, as a hidden
// deprecated alias: it sets the same value, and pflag tells on stderr to
// use the new name. A renamed flag keeps working in scripts.
func AliasFlag(fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	fs.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue,
		Hidden: true, Deprecated: "use --" + name})
}

// Dial connects and returns a client; a failure to connect wraps
// ErrUnavailable.
func (c *Conn) Dial(ctx context.Context) (*Client, error) {
	if c.Timeout <= 0 {
		return nil, fmt.Errorf("%w: --timeout %s: must be > 0", forecast.ErrInvalid, durfmt.Duration(c.Timeout))
	}
	cfg := c.NATS
	cfg.Name = "lookahead-cli"
	if cfg.User == "" {
		cfg.Password = ""
	}
	cfg.ConnectTimeout = c.Timeout
	as := c.As
	if as == "" {
		as = cfg.User
	}
	if cfg.InboxPrefix == "" && as != "" {
		cfg.InboxPrefix = "_INBOX_" + as
	}
	if err := cfg.Validate(); err != nil {
		return nil, badConnection(err)
	}
	nc, err := natsconn.Connect(ctx, cfg)
	if err != nil {
		if natsconn.IsConfigError(err) {
			return nil, badConnection(err) // a --nats-creds file that is not there is bad input
		}
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	cl := New(nc, as)
	cl.Timeout, cl.JSDomain = c.Timeout, cfg.JSDomain
	return cl, nil
}

// Close closes the client's connection.
func (c *Client) Close() { c.nc.Close() }

// flagOfKey names the flag and variable that set a NATS config key here.
var flagOfKey = map[string]string{"nats.url": "--nats-url", "nats.creds": "--nats-creds", "nats.nkey_seed": "--nats-nkey-seed",
	"nats.tls_ca": "--nats-tls-ca", "nats.tls_cert": "--nats-tls-cert", "nats.tls_key": "--nats-tls-key", "nats.js_domain": "--nats-js-domain", "nats.inbox_prefix": "--nats-inbox-prefix"}

// badConnection is a connection setting that cannot work (ErrBadConnection,
// bad input), named by its flag and variable, as the user set it, rather
// than by the daemons' config key.
func badConnection(err error) error {
	key, detail := natsconn.Key(err)
	if flag, ok := flagOfKey[key]; ok {
		env := "LOOKAHEAD_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
		err = fmt.Errorf("%s (or %s): %w", flag, env, detail)
	}
	return fmt.Errorf("%w: %w", ErrBadConnection, err)
}
