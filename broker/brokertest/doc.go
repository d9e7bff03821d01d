// Package brokertest holds helpers for tests of the broker machinery: a
// small exact reference planner. Not for production use.
package brokertest
