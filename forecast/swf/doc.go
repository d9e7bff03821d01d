// Package swf reads workloads in the Standard Workload Format of the
// Parallel Workloads Archive (Chapin, Cirne, Feitelson et al., JSSPP 1999):
// ';' header comments, then one job per line with 18 whitespace-separated
// numeric fields, -1 meaning "not known". It keeps the few fields a
// scheduler replay needs and turns them into simulator jobs.
//
// Pure: it reads an io.Reader (the caller opens and decompresses files),
// never logs; stdlib only.
package swf
