// Package natsconn connects lookahead processes to NATS from one typed
// config: URL, credentials (creds file, nkey seed, user/password or token),
// TLS with a pinned CA and optional client certificate, and a per-user
// inbox prefix. Agent, broker and CLI all connect through here so security
// options are handled once; docs/security.md explains them.
package natsconn
