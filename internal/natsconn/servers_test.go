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
		{"user in the URL", natsconn.Config{URL: "nats://u:p@a.example:4222"}, "nats://u:p@a.example:4222"},
		{"ip", natsconn.Config{URLs: []string{"tls://10.0.0.1:4443", "[::1]:4222"}}, "tls://10.0.0.1:4443,[::1]:4222"},
		{"no port in the URL", natsconn.Config{URLs: []string{"nats://nats1"}}, "!no port: write it, e.g. nats://nats1:4222"},
		{"no scheme separator", natsconn.Config{URLs: []string{"nats//nats1:4222"}}, "!want scheme://host:port"},
		{"bad host", natsconn.Config{URL: "nats://na ts1:4222"}, "!not a URL"},
		{"bad host no scheme", natsconn.Config{URL: "na$ts1:4222"}, "!host \"na$ts1\""},
		{"port 0", natsconn.Config{URL: "nats://a:0"}, "!port \"0\""},
		{"a path", natsconn.Config{URL: "nats://a:4222/x"}, "!without a path"},
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
