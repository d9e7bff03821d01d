// Package wire is the one definition of what lookahead's processes say to
// each other over NATS: subjects, bucket and stream names, and the versioned
// messages (forecast publication, reserve/release/list requests to agents,
// grid queue requests to the broker, audit records). Agent, broker and CLI
// import it; nothing here does I/O beyond encoding.
package wire
