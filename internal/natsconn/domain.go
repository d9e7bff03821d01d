package natsconn

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckDomain reports a JetStream domain nats-server would not accept as
// one subject token ($JS.<domain>.API): a dot, a wildcard or a blank.
// Empty is no domain.
func CheckDomain(d string) error {
	if i := strings.IndexFunc(d, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	}); i >= 0 {
		return fmt.Errorf("%q: a domain is one subject token (no '.', '*', '>' or blanks)", d)
	}
	return nil
}

// JetStream is the JetStream API of the grid on nc: in domain when set
// (jetstream.NewWithDomain: requests go to $JS.<domain>.API and cross a
// leaf node), else the account's JetStream on the server connected to.
func JetStream(nc *nats.Conn, domain string, opts ...jetstream.JetStreamOpt) (jetstream.JetStream, error) {
	if domain == "" {
		return jetstream.New(nc, opts...)
	}
	if err := CheckDomain(domain); err != nil {
		return nil, fmt.Errorf("jetstream domain: %w", err)
	}
	return jetstream.NewWithDomain(nc, domain, opts...)
}
