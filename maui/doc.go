// Package maui holds everything lookahead says to or reads from the Maui
// scheduler 3.3.1: simulation trace and config writers, the SIMULATION
// runner with an adaptive step, output parsers (showq, showres, diagnose -r,
// checkjob, showstart, simstat), and the setres/showres/releaseres
// reservation client.
package maui
