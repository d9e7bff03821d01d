package loopback

import "testing"

func TestAddr(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "127.9.0.1:1": true, "[::1]:1": true, "localhost:1": true,
		":1": false, "0.0.0.0:1": false, "10.0.0.1:1": false, "[::]:1": false, "garbage": false, "127.0.0.1": false} {
		if got := Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "[::1]": true,
		"": false, "example.org": false, "10.0.0.1": false, "localhost.example.org": false} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
