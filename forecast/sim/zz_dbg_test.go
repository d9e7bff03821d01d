package sim

import (
	"os"
	"sort"
	"testing"
)

func TestZZDbg(t *testing.T) {
	name := os.Getenv("ZZ")
	if name == "" {
		t.Skip()
	}
	c := loadRefCase(t, "testdata/mauiref/"+name)
	p, err := refPolicy(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ZZOFF") != "" {
		p.Nodes = nil
	}
	res, err := Run(c.cluster, c.jobs, p)
	if err != nil {
		t.Fatal(err)
	}
	base := c.jobs[1].Submit
	rs := res.Jobs
	sort.Slice(rs, func(a, b int) bool {
		return c.maui[rs[a].ID].start < c.maui[rs[b].ID].start || (c.maui[rs[a].ID].start == c.maui[rs[b].ID].start && rs[a].ID < rs[b].ID)
	})
	for k, r := range rs {
		if k > 60 {
			break
		}
		m := c.maui[r.ID]
		mark := ""
		if r.Start != m.start || hostNames(r.Hosts) != m.hosts {
			mark = "  <<<"
		}
		t.Logf("%s p%d u%s w%d sub+%d | maui +%d %s | sim +%d %s%s", r.ID, m.tasks, m.user, m.wclimit, m.queue-base, m.start-base, m.hosts, r.Start-base, hostNames(r.Hosts), mark)
	}
}

func TestZZOff(t *testing.T) {
	name := os.Getenv("ZZ")
	if name == "" {
		t.Skip()
	}
	c := loadRefCase(t, "testdata/mauiref/"+name)
	p, _ := refPolicy(c.cfg)
	p.Nodes = nil
	_, _, rep := compareRef(t, c, p)
	t.Log("ignored:", rep)
}
