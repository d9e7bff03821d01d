package gridnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
)

// Domain is the grid's JetStream domain in the packaged cluster.conf.
const Domain = "grid"

// Options say which sites the network has (default alpha and beta) and
// where it keeps its files.
type Options struct {
	Dir   string
	Sites []string
	// LeafJetStream gives every leaf node a JetStream of its own (the
	// misconfiguration `check` must name).
	LeafJetStream bool
}

// Net is a running grid network.
type Net struct {
	dir   string
	root  string
	pki   PKI
	hub   []*hubServer
	sites map[string]*Site
	order []string

	mu sync.Mutex
}

type hubServer struct {
	name, conf          string
	client, route, leaf int
	srv                 *natsembed.Server
}

// Site is one site: its leaf node and its link to the grid.
type Site struct {
	Name string
	// Seed is the site's agent nkey seed file (also the leaf node's
	// credentials on the grid).
	Seed string
	Link *Link

	conf string
	port int
	mu   sync.Mutex
	leaf *natsembed.Server
}

// Start builds and starts the network: the three grid servers, then each
// site's proxies and leaf node. It returns once every server accepts
// connections (not yet once the leaf links are up: WaitLinks).
func Start(o Options) (*Net, error) {
	if len(o.Sites) == 0 {
		o.Sites = []string{"alpha", "beta"}
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	n := &Net{dir: o.Dir, root: root, sites: map[string]*Site{}, order: o.Sites}
	if n.pki, err = NewPKI(mkdir(o.Dir, "pki"), "grid"); err != nil {
		return nil, err
	}
	grid, err := n.gridConf(o.Sites)
	if err != nil {
		return nil, err
	}
	if err := n.startHub(grid); err != nil {
		n.Close()
		return nil, err
	}
	for _, s := range o.Sites {
		if err := n.startSite(s, o.LeafJetStream); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// Close stops every server and proxy.
func (n *Net) Close() {
	for _, s := range n.sites {
		s.StopLeaf()
		if s.Link != nil {
			s.Link.Close()
		}
	}
	for i := range n.hub {
		n.StopHub(i)
	}
}

// HubURL is every grid server's client URL, comma-separated.
func (n *Net) HubURL() string {
	var urls []string
	for _, h := range n.hub {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", h.client))
	}
	return strings.Join(urls, ",")
}

// Site is the named site (nil if none).
func (n *Net) Site(name string) *Site { return n.sites[name] }

// Sites are the sites' names in the order given.
func (n *Net) Sites() []string { return append([]string(nil), n.order...) }

// Identity is the NATS config of one of grid.conf's identities on the grid
// servers: "broker", "operator" or "admin" (with their inbox prefixes).
func (n *Net) Identity(name string) natsconn.Config {
	return natsconn.Config{URL: n.HubURL(), Name: name, InboxPrefix: "_INBOX_" + name,
		NKeySeed: filepath.Join(n.root, "packaging", "nats", "testdata", name+".nk")}
}

// AgentConfig is how site's agent connects: to its leaf node, with its
// nkey, its inbox prefix and the grid's JetStream domain (what
// docs/operations.md tells a site admin to write in agent.yaml).
func (n *Net) AgentConfig(site string) natsconn.Config {
	s := n.sites[site]
	return natsconn.Config{URL: s.URL(), Name: "lookahead-agent-" + site, NKeySeed: s.Seed,
		InboxPrefix: "_INBOX_" + site, JSDomain: Domain}
}

// URL is the leaf node's client URL (whether it runs or not).
func (s *Site) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// LeafLinks is the number of leaf node connections the site's leaf has up
// (0 while its link is cut or the leaf is stopped).
func (s *Site) LeafLinks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaf == nil {
		return 0
	}
	return s.leaf.NumLeafNodes()
}

// WaitLinks waits until every site's leaf node has its link up.
func (n *Net) WaitLinks(ctx context.Context) error {
	for _, name := range n.order {
		if err := n.sites[name].WaitLink(ctx); err != nil {
			return err
		}
	}
	return nil
}

// WaitLink waits until the site's leaf node has its link to the grid up.
func (s *Site) WaitLink(ctx context.Context) error {
	if err := poll(ctx, func() bool { return s.LeafLinks() > 0 }); err != nil {
		return fmt.Errorf("site %s: leaf node link not up: %w", s.Name, err)
	}
	return nil
}

// StartLeaf starts the site's leaf node (again, after StopLeaf).
func (s *Site) StartLeaf() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaf != nil {
		return nil
	}
	srv, err := natsembed.Start(natsembed.Options{ConfigFile: s.conf, FromConfig: true, StoreDir: filepath.Join(filepath.Dir(s.conf), "js")})
	if err != nil {
		return fmt.Errorf("leaf node of %s: %w", s.Name, err)
	}
	s.leaf = srv
	return nil
}

// StopLeaf stops the site's leaf node.
func (s *Site) StopLeaf() {
	s.mu.Lock()
	srv := s.leaf
	s.leaf = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
	}
}

// StopHub stops grid server i (its store stays); StartHub starts it again.
func (n *Net) StopHub(i int) {
	n.mu.Lock()
	srv := n.hub[i].srv
	n.hub[i].srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
	}
}

// StartHub starts grid server i (again).
func (n *Net) StartHub(i int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.hub[i]
	if h.srv != nil {
		return nil
	}
	// the server's name comes from its environment, as in production
	os.Setenv("LOOKAHEAD_NATS_SERVER", h.name)
	srv, err := natsembed.Start(natsembed.Options{ConfigFile: h.conf, StoreDir: filepath.Join(filepath.Dir(h.conf), "js")})
	os.Unsetenv("LOOKAHEAD_NATS_SERVER")
	if err != nil {
		return fmt.Errorf("grid server %s from cluster.conf: %w", h.name, err)
	}
	h.srv = srv
	return nil
}

// Hub is grid server i while it runs (nil when stopped).
func (n *Net) Hub(i int) *natsembed.Server {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hub[i].srv
}

// WaitJetStream waits until the grid servers agree on a JetStream meta
// leader and each is current with it.
func (n *Net) WaitJetStream(ctx context.Context) error {
	err := poll(ctx, func() bool {
		leader, current := false, true
		for i := range n.hub {
			if s := n.Hub(i); s != nil {
				leader = leader || s.JetStreamIsLeader()
				current = current && s.JetStreamIsCurrent()
			}
		}
		return leader && current
	})
	if err != nil {
		return fmt.Errorf("grid: no JetStream meta leader: %w", err)
	}
	return nil
}

// poll checks cond every 20 ms until it holds or ctx ends.
func poll(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func mkdir(parts ...string) string {
	d := filepath.Join(parts...)
	os.MkdirAll(d, 0o700)
	return d
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// repoRoot is the module's directory: the nearest parent with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("gridnet: no go.mod above the working directory")
		}
		dir = parent
	}
}
