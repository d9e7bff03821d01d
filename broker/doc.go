// Package broker owns the grid side of lookahead: the co-allocation
// algorithm (pure, in broker/coalloc), the planning cycle over every site's
// latest forecast, the durable grid queue, the all-or-nothing commit of
// reservations across sites, and audit reconciliation.
package broker
