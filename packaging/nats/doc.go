// Package natsref holds lookahead's reference nats-server configuration
// (grid.conf: accounts, users and per-site permissions) and the tests that
// load it into a real embedded nats-server and prove what each identity
// may and may not do. It has no code of its own; docs/security.md explains
// the configuration and how to generate real keys.
package natsref
