package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// FuzzGanttQuery: whatever the query, /api/gantt answers 200 with a Gantt
// of at most MaxRowsCap rows within the window asked, or 400/404; never a
// panic.
func FuzzGanttQuery(f *testing.F) {
	f.Add("a", "0", "1000", "50")
	f.Add("a", "", "", "")
	f.Add("a", "-9223372036854775808", "9223372036854775807", "-1")
	f.Add("a", "9223372036854775807", "", "99999999999")
	f.Add("nope", "1", "2", "3")
	s, err := New(Config{Listen: "127.0.0.1:9466"}, fakeBroker{}, Streams{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, site, from, to, rows string) {
		q := url.Values{"site": {site}, "from": {from}, "to": {to}, "rows": {rows}}
		w := serve(t, s, "GET", "/api/gantt?"+q.Encode(), nil)
		switch w.Code {
		case http.StatusOK:
			var g Gantt
			if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil {
				t.Fatalf("body: %v", err)
			}
			if len(g.Rows) > MaxRowsCap || g.To <= g.From {
				t.Fatalf("gantt %+v", g)
			}
			for _, r := range g.Rows {
				for _, fr := range r.Free {
					if fr.Start < g.From || fr.End > g.To || fr.End <= fr.Start || fr.Frac <= 0 || fr.Frac > 1 {
						t.Fatalf("free span %+v outside [%d, %d)", fr, g.From, g.To)
					}
				}
			}
		case http.StatusBadRequest, http.StatusNotFound:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
