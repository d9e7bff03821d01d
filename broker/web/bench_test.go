package web_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"lookahead/internal/cputime"
)

// benchGET asks for url b.N times, as a page's poll does, and reports the
// CPU time per answer (the broker, its web view and the client in one
// process) and the answer's size.
func benchGET(b *testing.B, url string) {
	b.Helper()
	size := 0
	b.ResetTimer()
	c0 := cputime.Used()
	for range b.N {
		r, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			b.Fatalf("%s: %s", url, r.Status)
		}
		size = len(data)
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size), "bytes")
}

// BenchmarkWeb100Sites polls the page's API of a broker holding 100
// sites of 500 nodes (issue 39's scale; two slots a node over 24 h): the
// overview every tab polls (sorted by state, the worst first), and one
// site's Gantt in the rows of a 1000-px window.
func BenchmarkWeb100Sites(b *testing.B) {
	g := newGrid(b)
	for i := range 100 {
		g.publishBig(fmt.Sprintf("s%03d", i), 500)
	}
	g.startBroker()
	g.waitSites(100)
	b.Run("overview", func(b *testing.B) { benchGET(b, g.url+"api/overview?sort=state") })
	b.Run("gantt", func(b *testing.B) { benchGET(b, g.url+"api/gantt?site=s042&rows=50") })
}
