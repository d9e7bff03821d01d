package daemon

import (
	"sort"

	"lookahead/broker"
)

// SiteForecasts is what the broker holds of every site, sorted by name:
// the forecast it plans on (nodes, slots, unmodelled policy settings) and
// when the site last spoke. Read-only: the forecasts are shared with the
// broker, which replaces a site's forecast and never changes one in place;
// callers must not change them either.
func (b *Broker) SiteForecasts() []broker.Site {
	b.mu.Lock()
	out := b.siteList()
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Name is the broker's actor name (Config.Name).
func (b *Broker) Name() string { return b.cfg.Name }
