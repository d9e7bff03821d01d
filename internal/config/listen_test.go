package config

import "testing"

func TestListenAddress(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"", "", false},
		{"off", "", false},
		{"127.0.0.1:9464", "127.0.0.1:9464", false},
		{":9464", ":9464", false},
		{"[::1]:0", "[::1]:0", false},
		{"9464", "", true},
		{"OFF", "", true},
		{"127.0.0.1:http", "", true},
		{"127.0.0.1:70000", "", true},
	}
	for _, c := range cases {
		got, err := ListenAddress("metrics.listen", c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ListenAddress(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}
