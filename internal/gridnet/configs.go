package gridnet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nkeys"

	"lookahead/internal/faultnet"
)

// replace applies old → new pairs to text; each old must occur, so a
// packaged file that changed shape fails loudly instead of running
// half-substituted.
func replace(what, text string, pairs ...string) (string, error) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			return "", fmt.Errorf("gridnet: %s has no %q", what, pairs[i])
		}
		text = strings.ReplaceAll(text, pairs[i], pairs[i+1])
	}
	return text, nil
}

func (n *Net) packaged(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(n.root, "packaging", "nats", name))
	return string(b), err
}

// gridConf is grid.conf with every site beyond alpha and beta added the
// way its comments say: a copy of PERMS_AGENT_ALPHA with the site's name,
// and a user with the site's own nkey (generated; its seed is written to
// the network's keys directory). Each site's seed file is recorded.
func (n *Net) gridConf(sites []string) (string, error) {
	grid, err := n.packaged("grid.conf")
	if err != nil {
		return "", err
	}
	start := strings.Index(grid, "PERMS_AGENT_ALPHA = {")
	end := strings.Index(grid, "PERMS_AGENT_BETA = {")
	userLine := "{nkey: UA2JZKHBJFRDXG4LN2UG6KF4ADFDAYQMT7UXORG2CRGAXS6IMU2MBP4C, permissions: $PERMS_AGENT_ALPHA}"
	if start < 0 || end < start || !strings.Contains(grid, userLine) {
		return "", fmt.Errorf("gridnet: grid.conf has no PERMS_AGENT_ALPHA block or alpha user line")
	}
	block := grid[start:end]
	keys := mkdir(n.dir, "keys")
	var perms, users strings.Builder
	for _, s := range sites {
		if s == "alpha" || s == "beta" {
			n.sites[s] = &Site{Name: s, Seed: filepath.Join(n.root, "packaging", "nats", "testdata", "agent-"+s+".nk")}
			continue
		}
		kp, err := nkeys.CreateUser()
		if err != nil {
			return "", err
		}
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		path := filepath.Join(keys, "agent-"+s+".nk")
		if err := os.WriteFile(path, seed, 0o600); err != nil {
			return "", err
		}
		n.sites[s] = &Site{Name: s, Seed: path}
		up := "PERMS_AGENT_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
		perms.WriteString(strings.NewReplacer("PERMS_AGENT_ALPHA", up, "alpha", s).Replace(block))
		fmt.Fprintf(&users, "\n      {nkey: %s, permissions: $%s}", pub, up)
	}
	grid = grid[:end] + perms.String() + grid[end:]
	return strings.Replace(grid, userLine, userLine+users.String(), 1), nil
}

// startHub writes cluster.conf for each of three servers — its listen,
// route and leaf node addresses moved to free loopback ports, its store
// and TLS files to the network's directory — beside grid, and starts them.
func (n *Net) startHub(grid string) error {
	var err error
	for attempt := range 3 {
		if err = n.startHubOnce(grid, attempt); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			return err
		}
		for i := range n.hub {
			n.StopHub(i)
		}
		n.hub = nil
	}
	return err
}

// startHubOnce picks the three servers' ports free before any of them
// starts, so another process (or the first server's own route dials, from
// ephemeral ports) can take one in between, and the server that cannot
// listen fails (natsembed returns its listen error); startHub then starts
// the grid again on new ports in new folders, for that error only.
func (n *Net) startHubOnce(grid string, attempt int) error {
	conf, err := n.packaged("cluster.conf")
	if err != nil {
		return err
	}
	for i := range 3 {
		h := &hubServer{name: fmt.Sprintf("nats%d", i+1)}
		for _, p := range []*int{&h.client, &h.route, &h.leaf} {
			if *p, err = freePort(); err != nil {
				return err
			}
		}
		n.hub = append(n.hub, h)
	}
	for _, h := range n.hub {
		dir := mkdir(n.dir, h.name)
		if attempt > 0 {
			dir = mkdir(n.dir, fmt.Sprintf("%s-%d", h.name, attempt))
		}
		pairs := []string{"0.0.0.0:4222", addr(h.client), "0.0.0.0:6222", addr(h.route), "0.0.0.0:7422", addr(h.leaf),
			"/var/lib/nats/jetstream", filepath.Join(dir, "js"),
			"/etc/nats/server.pem", n.pki.ServerCert, "/etc/nats/server-key.pem", n.pki.ServerKey, "/etc/nats/grid-ca.pem", n.pki.CA}
		for j, o := range n.hub {
			pairs = append(pairs, fmt.Sprintf("nats%d:6222", j+1), addr(o.route))
		}
		text, err := replace("cluster.conf", conf, pairs...)
		if err != nil {
			return err
		}
		h.conf = filepath.Join(dir, "cluster.conf")
		if err := writeFiles(dir, "cluster.conf", text, "grid.conf", grid); err != nil {
			return err
		}
	}
	for i := range n.hub {
		if err := n.StartHub(i); err != nil {
			return err
		}
	}
	return nil
}

// startSite starts the site's proxies (one per grid server) and its leaf
// node from leaf.conf: its name, listen port and local user (the site's
// agent) set, its remote's urls pointed at the proxies, its seed file
// written beside it, the grid's CA pinned.
func (n *Net) startSite(name string, leafJS bool) error {
	s := n.sites[name]
	var urls []string
	s.Link = &Link{}
	for _, h := range n.hub {
		p, err := faultnet.Start(addr(h.leaf))
		if err != nil {
			return err
		}
		s.Link.proxies = append(s.Link.proxies, p)
		urls = append(urls, "tls://"+p.Addr())
	}
	conf, err := n.packaged("leaf.conf")
	if err != nil {
		return err
	}
	seed, err := os.ReadFile(s.Seed)
	if err != nil {
		return err
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return fmt.Errorf("site %s seed: %w", name, err)
	}
	pub, _ := kp.PublicKey()
	if s.port, err = freePort(); err != nil {
		return err
	}
	text, err := replace("leaf.conf", conf, "server_name: leaf-alpha", "server_name: leaf-"+name,
		"listen: 127.0.0.1:4222", "listen: "+addr(s.port),
		"UA2JZKHBJFRDXG4LN2UG6KF4ADFDAYQMT7UXORG2CRGAXS6IMU2MBP4C", pub,
		"tls://nats1.grid.example:7422", urls[0], "tls://nats2.grid.example:7422", urls[1], "tls://nats3.grid.example:7422", urls[2],
		"/etc/nats/grid-ca.pem", n.pki.CA)
	if err != nil {
		return err
	}
	if leafJS { // the misconfiguration: a leaf node with a JetStream of its own
		text = strings.Replace(text, "SITE {", "SITE {\n    jetstream: enabled", 1) + "\njetstream {}\n"
	}
	dir := mkdir(n.dir, "leaf-"+name)
	s.conf = filepath.Join(dir, "leaf.conf")
	if err := writeFiles(dir, "leaf.conf", text, "leaf-seed.conf", "nkey: "+strings.TrimSpace(string(seed))+"\n"); err != nil {
		return err
	}
	return s.StartLeaf()
}

func addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

func writeFiles(dir string, nameText ...string) error {
	for i := 0; i+1 < len(nameText); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, nameText[i]), []byte(nameText[i+1]), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Link is a site's link to the grid: one proxy per grid server, acted on
// together.
type Link struct{ proxies []*faultnet.Proxy }

// Cut closes the link and refuses it until Heal.
func (l *Link) Cut() {
	for _, p := range l.proxies {
		p.Cut()
	}
}

// Heal lets the leaf node dial the grid again.
func (l *Link) Heal() {
	for _, p := range l.proxies {
		p.Heal()
	}
}

// Stall holds back everything on the link (connections stay open) until
// Resume.
func (l *Link) Stall() {
	for _, p := range l.proxies {
		p.Stall()
	}
}

// Resume forwards again what Stall held back.
func (l *Link) Resume() {
	for _, p := range l.proxies {
		p.Resume()
	}
}

// SetLatency adds d to each direction of the link (a round trip of 2d).
func (l *Link) SetLatency(d time.Duration) {
	for _, p := range l.proxies {
		p.SetLatency(d)
	}
}

// Close stops the link's proxies.
func (l *Link) Close() {
	for _, p := range l.proxies {
		p.Close()
	}
}
