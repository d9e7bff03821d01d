package natsconn_test

import (
	"strings"
	"testing"

	"lookahead/internal/natsconn"
)

func TestServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  natsconn.Config
		want string // joined, or the error's substring after "!"
	}{
		{"default", natsconn.Config{}, "nats://127.0.0.1:4222"},
		{"one", natsconn.Config{URL: "nats://a:4222"}, "nats://a:4222"},
		{"comma", natsconn.Config{URL: "nats://a:4222, nats://b:4222,tls://c:4223"}, "nats://a:4222,nats://b:4222,tls://c:4223"},
		{"list wins", natsconn.Config{URL: "nats://x:1", URLs: []string{"nats://a:4222", "b:4222"}}, "nats://a:4222,b:4222"},
		{"no port is the default", natsconn.Config{URL: "nats://a"}, "nats://a"},
		{"empty item", natsconn.Config{URL: "nats://a:4222,,nats://b:4222"}, "!empty server URL"},
		{"scheme", natsconn.Config{URLs: []string{"http://a:4222"}}, "!scheme \"http\""},
		{"twice", natsconn.Config{URL: "nats://a:4222,nats://a:4222"}, "!listed twice"},
		{"no port", natsconn.Config{URLs: []string{"a"}}, "!want scheme://host:port"},
	} {
		got, err := tc.cfg.Servers()
		switch {
		case strings.HasPrefix(tc.want, "!"):
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("%s: %v %v, want error %q", tc.name, got, err, tc.want[1:])
			}
			if verr := tc.cfg.Validate(); verr == nil {
				t.Errorf("%s: Validate passes", tc.name)
			}
		case err != nil || strings.Join(got, ",") != tc.want:
			t.Errorf("%s: %v %v, want %s", tc.name, got, err, tc.want)
		}
	}
}
