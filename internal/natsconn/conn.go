package natsconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// Config is how to reach NATS. Empty fields are not used. The `default`
// and `min` tags are the daemons' config defaults and bounds
// (internal/config).
type Config struct {
	// URL is the server, or several separated by commas (a cluster: the
	// client moves to another when one is lost).
	URL string `mapstructure:"url" json:"url" default:"nats://127.0.0.1:4222"`
	// URLs, when set, lists the cluster's servers (a YAML list) and
	// replaces URL.
	URLs     []string `mapstructure:"urls" json:"urls,omitempty"`
	Name     string   `mapstructure:"name" json:"name"` // client name shown by the server
	Creds    string   `mapstructure:"creds" json:"creds"`
	NKeySeed string   `mapstructure:"nkey_seed" json:"nkey_seed"` // path to an nkey seed file
	User     string   `mapstructure:"user" json:"user"`
	Password string   `mapstructure:"password" json:"-"`
	Token    string   `mapstructure:"token" json:"-"`
	TLSCA    string   `mapstructure:"tls_ca" json:"tls_ca"`
	TLSCert  string   `mapstructure:"tls_cert" json:"tls_cert"`
	TLSKey   string   `mapstructure:"tls_key" json:"tls_key"`
	// InboxPrefix replaces "_INBOX" as the prefix of reply subjects, so a
	// server can let each user subscribe only to its own inbox (see
	// packaging/nats/grid.conf): e.g. "_INBOX_alpha". Empty: "_INBOX".
	InboxPrefix string `mapstructure:"inbox_prefix" json:"inbox_prefix"`
	// JSDomain is the JetStream domain of the grid's servers (their
	// `jetstream { domain: … }`, "grid" in packaging/nats/cluster.conf).
	// A client behind a site's leaf node must set it: the leaf passes
	// JetStream traffic to the grid only under the domain's prefix
	// ($JS.<domain>.API). Empty: the JetStream of the server connected to.
	JSDomain string `mapstructure:"js_domain" json:"js_domain"`
	// ConnectTimeout bounds the first connection; 0 means 5 s.
	ConnectTimeout time.Duration `mapstructure:"connect_timeout" json:"connect_timeout" default:"5s" min:"100ms"`
}

// Validate reports options that cannot work together and server URLs
// that are not ones; its errors are bad input (IsConfigError).
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return configError{err}
	}
	return nil
}

// configError is a configuration that cannot work: the user's to fix
// (BadInput: the CLIs exit 2), not a server that cannot be reached.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }
func (configError) BadInput() bool  { return true }

// IsConfigError reports whether err comes from Validate: the
// configuration is wrong, no server was tried.
func IsConfigError(err error) bool {
	var c configError
	return errors.As(err, &c)
}

// keyError is a problem with the value of one key ("nats.url").
type keyError struct {
	key string
	err error
}

func (e keyError) Error() string { return e.key + ": " + e.err.Error() }
func (e keyError) Unwrap() error { return e.err }

// Key is the config key (e.g. "nats.creds") that an error of Validate,
// Options or Connect is about, and the problem without the key; "" when
// the error names no one key. A CLI names its flag instead.
func Key(err error) (string, error) {
	var k keyError
	if errors.As(err, &k) {
		return k.key, k.err
	}
	return "", err
}

// checkFiles opens every file the config names, so that a missing or
// unreadable credentials, seed or certificate file is bad input naming
// its key, before any server is tried (nats.go reports it as a failed
// connection, without the key).
func (c Config) checkFiles() error {
	for _, f := range []struct{ key, path string }{{"nats.creds", c.Creds}, {"nats.nkey_seed", c.NKeySeed},
		{"nats.tls_ca", c.TLSCA}, {"nats.tls_cert", c.TLSCert}, {"nats.tls_key", c.TLSKey}} {
		if f.path == "" {
			continue
		}
		if err := readable(f.path); err != nil {
			return configError{keyError{f.key, err}}
		}
	}
	return nil
}

// readable reports why path is not a file this process can read.
func readable(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s: %w (want a file)", path, syscall.EISDIR)
	}
	return nil
}

func (c Config) validate() error {
	n := 0
	for _, set := range []bool{c.Creds != "", c.NKeySeed != "", c.User != "", c.Token != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("nats: choose one of creds, nkey_seed, user/password, token")
	}
	if c.TLSCert != "" && c.TLSKey == "" {
		return keyError{"nats.tls_key", errors.New("missing: a client certificate and its key go together")}
	}
	if c.TLSKey != "" && c.TLSCert == "" {
		return keyError{"nats.tls_cert", errors.New("missing: a client certificate and its key go together")}
	}
	if err := CheckDomain(c.JSDomain); err != nil {
		return keyError{"nats.js_domain", err}
	}
	_, err := c.Servers()
	return err
}

// Authenticated reports whether the config gives an identity (creds, an
// nkey seed, a user or a token). Without one (one machine, the
// quickstart) the daemons create the streams and the bucket themselves;
// with one, grid.conf does not let them, and `lookahead-broker init`
// must have.
func (c Config) Authenticated() bool {
	return c.Creds != "" || c.NKeySeed != "" || c.User != "" || c.Token != ""
}

// Options turns the config into nats.go options.
func (c Config) Options() ([]nats.Option, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.checkFiles(); err != nil {
		return nil, err
	}
	timeout := c.ConnectTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	opts := []nats.Option{nats.Name(c.Name), nats.Timeout(timeout), nats.MaxReconnects(-1)}
	switch {
	case c.Creds != "":
		opts = append(opts, nats.UserCredentials(c.Creds))
	case c.NKeySeed != "":
		opt, err := nats.NkeyOptionFromSeed(c.NKeySeed)
		if err != nil {
			return nil, fmt.Errorf("nats nkey seed %s: %w", c.NKeySeed, err)
		}
		opts = append(opts, opt)
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	}
	if c.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(c.InboxPrefix))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	return opts, nil
}

// Connect dials NATS with the config's options.
func Connect(ctx context.Context, c Config) (*nats.Conn, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	servers, err := c.Servers()
	if err != nil {
		return nil, err
	}
	url := strings.Join(servers, ",")
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(url, opts...)
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("connect to nats at %s: %w", url, r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("connect to nats at %s: %w", url, ctx.Err())
	}
}
