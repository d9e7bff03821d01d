package natsconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reach is what a client connected to one server can find out about the
// grid's JetStream from there: whether it answers in the configured
// domain, and — when the server tells its own account statistics — what
// that server is (its own JetStream or none, its leaf node links up for
// this account). A site's leaf node answers the statistics itself, so a
// client behind it sees whether the leaf's link to the grid is up.
type Reach struct {
	Domain   string // the domain asked ("": none)
	JSErr    error  // the JetStream account info request's error
	JSDomain string // the domain of the JetStream that answered
	Server   ServerFacts
}

// ServerFacts are the connected server's answer to the account
// statistics request ($SYS.REQ.ACCOUNT.PING.STATZ, which every account
// imports). Known is false when it did not answer (not allowed, as in
// packaging/nats/grid.conf for the daemons' identities, or too old).
type ServerFacts struct {
	Known     bool
	Name      string
	JetStream bool   // the server runs a JetStream of its own
	Domain    string // the domain of that JetStream
	LeafLinks int    // leaf node connections of this account on it
}

// statzTimeout bounds the account statistics request: the server answers
// it itself, or a permission violation makes it wait for nothing.
const statzTimeout = time.Second

// Probe asks the grid's JetStream (in domain, when set) for the account's
// info, and the connected server for its account statistics.
func Probe(ctx context.Context, nc *nats.Conn, domain string) Reach {
	r := Reach{Domain: domain, Server: serverFacts(ctx, nc)}
	js, err := JetStream(nc, domain)
	if err == nil {
		var info *jetstream.AccountInfo
		if info, err = js.AccountInfo(ctx); err == nil {
			r.JSDomain = info.Domain
		}
	}
	r.JSErr = err
	return r
}

// statz is the part of the server's account statistics Probe reads.
type statz struct {
	Server struct {
		Name      string `json:"name"`
		JetStream bool   `json:"jetstream"`
		Domain    string `json:"domain"`
	} `json:"server"`
	Data struct {
		Accounts []struct {
			LeafNodes int `json:"leafnodes"`
		} `json:"account_statz"`
	} `json:"data"`
}

func serverFacts(ctx context.Context, nc *nats.Conn) ServerFacts {
	ctx, cancel := context.WithTimeout(ctx, statzTimeout)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, "$SYS.REQ.ACCOUNT.PING.STATZ", []byte(`{"unused":true}`))
	if err != nil {
		return ServerFacts{}
	}
	var s statz
	if json.Unmarshal(m.Data, &s) != nil || s.Server.Name == "" || len(s.Data.Accounts) != 1 {
		return ServerFacts{}
	}
	return ServerFacts{Known: true, Name: s.Server.Name, JetStream: s.Server.JetStream, Domain: s.Server.Domain,
		LeafLinks: s.Data.Accounts[0].LeafNodes}
}

// Verdict is what Reach means for a lookahead daemon or the CLI: OK, or
// what is wrong and its fix. Unreachable marks a link or servers that are
// down (come back later) rather than a setting to change. Pure.
type Verdict struct {
	OK          bool
	Detail, Fix string
	Unreachable bool
}

// The grid's domain in the packaged configuration, named in the fixes.
const packagedDomain = "grid (packaging/nats/cluster.conf)"

// Judge tells apart what a client may have run into: a leaf node whose
// link to the grid is down, a leaf node reached without nats.js_domain (or
// with another domain than the grid's), a leaf node with a JetStream of
// its own (not the grid's), and a server whose JetStream does not serve
// the account. Pure.
func (r Reach) Judge() Verdict {
	s := r.Server
	if r.JSErr == nil {
		if r.Domain == "" && s.Known && s.JetStream && s.LeafLinks > 0 {
			return Verdict{Detail: fmt.Sprintf("server %s runs a JetStream of its own (domain %q) and has %d leaf node link(s) for this account: if it is this site's leaf node, that JetStream is not the grid's, and the forecasts and the audit trail would stay on the site",
				s.Name, r.JSDomain, s.LeafLinks),
				Fix: "set nats.js_domain to the grid's domain, " + packagedDomain + ", and turn JetStream off on the leaf node (packaging/nats/leaf.conf)" + gridServer(r.JSDomain)}
		}
		return Verdict{OK: true, Detail: "JetStream available" + inDomain(r.JSDomain)}
	}
	timeout := errors.Is(r.JSErr, context.DeadlineExceeded) || errors.Is(r.JSErr, nats.ErrTimeout)
	noAnswer := timeout || errors.Is(r.JSErr, nats.ErrNoResponders) || errors.Is(r.JSErr, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(r.JSErr, jetstream.ErrJetStreamNotEnabledForAccount)
	local := s.JetStream && (r.Domain == "" || r.Domain == s.Domain) // the JetStream asked is this server's
	switch {
	case !s.Known || !noAnswer:
		return r.unknownServer()
	case timeout && s.LeafLinks > 0 && !local:
		// a wrong domain has no responders at once; silence is the link
		return Verdict{Unreachable: true, Detail: fmt.Sprintf("server %s is a leaf node with its link up, but the grid did not answer in time (%v): the link is stalled, or the grid's servers are down or electing", s.Name, r.JSErr),
			Fix: "try again; if it lasts, check the path to the grid (firewall, proxy) and the grid's servers — a leaf notices a dead link only after its pings go unanswered (minutes)"}
	case local:
		return Verdict{Detail: fmt.Sprintf("server %s runs JetStream%s, but it does not serve this account: %v", s.Name, inDomain(s.Domain), r.JSErr),
			Fix: "enable JetStream for the account (jetstream: enabled in its accounts block); a cluster may still be electing its JetStream leader: try again"}
	case s.LeafLinks == 0:
		v := Verdict{Unreachable: true, Detail: fmt.Sprintf("the leaf node's link to the grid is down: server %s has no leaf node link up for this account, and the JetStream asked is not its own (%v)", s.Name, r.JSErr),
			Fix: "check the leaf node's remote to the grid — its urls, credentials and TLS, the firewall (nats-server logs \"Leafnode connection\"; /leafz on its monitoring port); the agent waits for it"}
		if r.Domain == "" {
			v.Fix += "; and set nats.js_domain to the grid's domain, " + packagedDomain
		}
		return v
	case r.Domain == "":
		return Verdict{Detail: fmt.Sprintf("server %s is a leaf node with its link up, but nats.js_domain is not set: without the grid's domain no JetStream answers through a leaf node (%v)", s.Name, r.JSErr),
			Fix: "set nats.js_domain to the grid's domain (the grid servers' jetstream { domain }), " + packagedDomain}
	}
	return Verdict{Detail: fmt.Sprintf("server %s is a leaf node with its link up, but no JetStream of domain %q answers through it (%v)", s.Name, r.Domain, r.JSErr),
		Fix: "set nats.js_domain to the grid's domain (the grid servers' jetstream { domain }), " + packagedDomain + "; and check that the grid lets this identity use $JS." + r.Domain + ".API (packaging/nats/grid.conf)"}
}

// unknownServer is the verdict when the server did not say what it is.
func (r Reach) unknownServer() Verdict {
	v := Verdict{Detail: "JetStream: " + r.JSErr.Error()}
	switch {
	case errors.Is(r.JSErr, context.DeadlineExceeded) || errors.Is(r.JSErr, nats.ErrTimeout):
		v.Fix, v.Unreachable = "JetStream did not answer in time: are the servers electing their JetStream leader, or is a leaf node's link to the grid stalled? Try again", true
	case r.Domain == "":
		v.Fix = "enable JetStream on the server and for this account; if this client reaches the grid through a leaf node, set nats.js_domain to the grid's domain, " + packagedDomain
	default:
		v.Fix = "check nats.js_domain (" + r.Domain + ") against the grid servers' jetstream { domain }; behind a leaf node, check that its link to the grid is up"
	}
	return v
}

func inDomain(d string) string {
	if d == "" {
		return ""
	}
	return " (domain " + d + ")"
}

// gridServer is the fix's clause for a client connected to a grid server
// that has leaf nodes: its JetStream has the grid's domain.
func gridServer(d string) string {
	if d == "" {
		return ""
	}
	return "; if it is a grid server, set nats.js_domain to its domain " + d + " to say so"
}
