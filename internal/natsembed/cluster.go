package natsembed

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is a JetStream cluster of real nats-servers in this process, on
// loopback: each with its own store directory, client port and route
// port, all routed to each other. A stopped server can be started again
// on the same ports with its store (a restart).
type Cluster struct {
	mu      sync.Mutex
	name    string
	dir     string
	servers []*server.Server // nil while stopped
	ports   []int            // client ports
	routes  []int            // route ports
}

// StartCluster starts n servers (3 for a JetStream cluster that survives
// the loss of one) with their stores under dir and waits until each
// accepts connections. Ports are picked free on 127.0.0.1.
func StartCluster(n int, dir string) (*Cluster, error) {
	c := &Cluster{name: "lookahead-test", dir: dir, servers: make([]*server.Server, n)}
	for range 2 * n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if len(c.ports) < n {
			c.ports = append(c.ports, p)
		} else {
			c.routes = append(c.routes, p)
		}
	}
	for i := range n {
		if err := c.Start(i); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	return c, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// options are server i's: named n<i+1>, routed to every other server.
func (c *Cluster) options(i int) *server.Options {
	o := &server.Options{
		ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: c.ports[i],
		JetStream: true, StoreDir: filepath.Join(c.dir, fmt.Sprintf("n%d", i+1)),
		NoSigs: true, NoLog: true,
	}
	o.Cluster.Name, o.Cluster.Host, o.Cluster.Port = c.name, "127.0.0.1", c.routes[i]
	for j, p := range c.routes {
		if j != i {
			o.Routes = append(o.Routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)})
		}
	}
	return o
}

// Start starts server i (again, after Stop: same ports, same store).
func (c *Cluster) Start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.servers[i] != nil {
		return nil
	}
	s, err := server.NewServer(c.options(i))
	if err != nil {
		return fmt.Errorf("cluster server n%d: %w", i+1, err)
	}
	if err := run(s); err != nil {
		s.Shutdown()
		return fmt.Errorf("cluster server n%d: %w", i+1, err)
	}
	c.servers[i] = s
	return nil
}

// Stop shuts server i down and waits for it; its store stays.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	s := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Shutdown stops every server.
func (c *Cluster) Shutdown() {
	for i := range c.servers {
		c.Stop(i)
	}
}

// URLs is every server's client URL, comma-separated (running or not).
func (c *Cluster) URLs() string {
	out := make([]string, len(c.ports))
	for i, p := range c.ports {
		out[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	return strings.Join(out, ",")
}

// Size is the number of servers, running or not.
func (c *Cluster) Size() int { return len(c.ports) }

// StreamLeader is the index of the running server that leads stream (of
// the global account), -1 when none does.
func (c *Cluster) StreamLeader(stream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.servers {
		if s != nil && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// WaitJetStream waits until the running servers agree on a JetStream meta
// leader and each is current with it (a new cluster elects one in a few
// seconds; requests before that time out).
func (c *Cluster) WaitJetStream(within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		c.mu.Lock()
		leader, current := false, true
		for _, s := range c.servers {
			if s == nil {
				continue
			}
			leader = leader || s.JetStreamIsLeader()
			current = current && s.JetStreamIsCurrent()
		}
		c.mu.Unlock()
		if leader && current {
			return nil
		}
	}
	return fmt.Errorf("cluster: no JetStream meta leader after %v", within)
}
