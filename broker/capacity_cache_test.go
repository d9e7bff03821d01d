package broker

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// CapacityOf sums the nodes of every site anew, as each submission did
// before CapacityCache: the cache's baseline and reference.
func CapacityOf(sites []Site) Capacity {
	c := Capacity{}
	for _, s := range sites {
		if s.Forecast.Site == "" {
			continue
		}
		c[s.Name] = sizeOf(&s.Forecast)
	}
	return c
}

// capacitySite is a site of nodes nodes of procs processors, forecast
// revision seq over span seconds.
func capacitySite(name string, seq uint64, nodes, procs int, span int64) *Site {
	f := forecast.Forecast{Site: name, Seq: seq, Generated: 1000, Horizon: 1000 + span}
	for n := range nodes {
		f.Nodes = append(f.Nodes, forecast.Node{Name: fmt.Sprintf("%s%d", name, n), Procs: procs, Speed: 1 + float64(n%3)/2})
	}
	return &Site{Name: name, Forecast: f}
}

// The cache answers what CapacityOf does as sites come, change revision
// (in place of the old forecast, as the daemon takes one) and go.
func TestCapacityCacheFollowsTheSites(t *testing.T) {
	sites := map[string]*Site{
		"a": capacitySite("a", 1, 4, 8, 86400), "b": capacitySite("b", 1, 2, 16, 3600),
		"never": {Name: "never"}, // no forecast taken
	}
	c := CapacityCache{}
	check := func(step string) {
		t.Helper()
		var list []Site
		for _, s := range sites {
			list = append(list, *s)
		}
		if got, want := c.Of(maps.Values(sites)), CapacityOf(list); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: cache %v, CapacityOf %v", step, got, want)
		}
	}
	check("first")
	check("again")
	sites["a"] = capacitySite("a", 2, 6, 8, 7200) // a new revision with more nodes, a shorter window
	check("new revision")
	b := *sites["b"]
	b.Forecast.Generated += 600 // the same revision generated again, later
	sites["b"] = &b
	check("regenerated")
	delete(sites, "a")
	check("site gone")
	if _, kept := c["a"]; kept {
		t.Fatal("a site gone stays in the cache")
	}
}

// BenchmarkCapacityAt100Sites is a submission's check of the grid's size
// at 100 sites of 500 nodes: the cache against CapacityOf (what each
// submission computed before).
func BenchmarkCapacityAt100Sites(b *testing.B) {
	sites := map[string]*Site{}
	var list []Site
	for i := range 100 {
		s := capacitySite(fmt.Sprintf("s%03d", i), 1, 500, 8, 7*86400)
		sites[s.Name] = s
		list = append(list, *s)
	}
	b.Run("algo=cache", func(b *testing.B) {
		c := CapacityCache{}
		for b.Loop() {
			c.Of(maps.Values(sites))
		}
	})
	b.Run("algo=sum", func(b *testing.B) {
		for b.Loop() {
			CapacityOf(list)
		}
	})
}
