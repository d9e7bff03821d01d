package maui

import (
	"fmt"
	"io"
	"strings"
)

// ACLEntry is one term of a Maui reservation ACL as diagnose -r prints it,
// "USER==griduser+": Type "USER", Name "griduser", Mod "+".
type ACLEntry struct {
	Type string
	Name string
	Mod  string
}

// ResDiag is one reservation block of `diagnose -r`. Start, End are
// seconds relative to Maui's clock. TaskProcs is what one task holds
// ("[ALL]": the whole node; "1": one processor). HostList is the node
// expression the reservation was made with.
type ResDiag struct {
	ID        string
	Type      string
	Partition string
	Start     int64
	End       int64
	Duration  int64
	Nodes     int
	Tasks     int
	Procs     int
	Flags     []string
	ACL       []ACLEntry
	CL        []ACLEntry
	TaskProcs string
	HostList  string
	Warnings  []string
}

// ACLNames lists the names of the ACL entries of one type ("USER",
// "GROUP", "ACCT", "CLASS", "QOS").
func (d ResDiag) ACLNames(typ string) []string {
	var out []string
	for _, a := range d.ACL {
		if a.Type == typ {
			out = append(out, a.Name)
		}
	}
	return out
}

// ParseDiagnoseRes reads `diagnose -r`.
func ParseDiagnoseRes(r io.Reader) ([]ResDiag, error) {
	ls, err := lines(r)
	if err != nil {
		return nil, fmt.Errorf("diagnose -r: %w", err)
	}
	if len(ls) == 0 || ls[0] != "Diagnosing Reservations" {
		return nil, fmt.Errorf("diagnose -r: no \"Diagnosing Reservations\" title (not diagnose -r output?)")
	}
	var out []ResDiag
	for i := 1; i < len(ls); i++ {
		l := ls[i]
		f := strings.Fields(l)
		switch {
		case len(f) == 0, f[0] == "ResID", f[0] == "-----", strings.HasPrefix(l, "Active Reserved Processors:"):
		case strings.HasPrefix(l, "WARNING:") || strings.HasPrefix(l, "ALERT:"):
			if len(out) > 0 {
				out[len(out)-1].Warnings = append(out[len(out)-1].Warnings, strings.TrimSpace(l))
			}
		case l[0] == ' ' || l[0] == '\t':
			if len(out) == 0 {
				return nil, &lineError{"diagnose -r", i + 1, l, fmt.Errorf("detail before any reservation")}
			}
			diagDetail(&out[len(out)-1], strings.TrimSpace(l))
		default:
			d, err := parseDiagRow(f)
			if err != nil {
				return nil, &lineError{"diagnose -r", i + 1, l, err}
			}
			out = append(out, d)
		}
	}
	return out, nil
}

func parseDiagRow(f []string) (ResDiag, error) {
	if len(f) != 9 {
		return ResDiag{}, fmt.Errorf("want 9 fields, got %d", len(f))
	}
	d := ResDiag{ID: f[0], Type: f[1], Partition: f[2]}
	var err error
	for _, p := range []struct {
		dst *int64
		s   string
	}{{&d.Start, f[3]}, {&d.End, f[4]}, {&d.Duration, f[5]}} {
		if *p.dst, err = ParseDuration(p.s); err != nil {
			return d, err
		}
	}
	for _, p := range []struct {
		dst  *int
		s, n string
	}{{&d.Nodes, f[6], "nodes"}, {&d.Tasks, f[7], "tasks"}, {&d.Procs, f[8], "procs"}} {
		if *p.dst, err = atoiField(p.s, p.n); err != nil {
			return d, err
		}
	}
	return d, nil
}

// diagDetail folds one indented detail line into d; unknown lines are
// ignored.
func diagDetail(d *ResDiag, l string) {
	switch {
	case strings.HasPrefix(l, "Flags:"):
		d.Flags = strings.Fields(strings.TrimPrefix(l, "Flags:"))
	case strings.HasPrefix(l, "ACL:"):
		d.ACL = parseACL(strings.TrimPrefix(l, "ACL:"))
	case strings.HasPrefix(l, "CL:"):
		d.CL = parseACL(strings.TrimPrefix(l, "CL:"))
	case strings.HasPrefix(l, "Task Resources:"):
		d.TaskProcs = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(l, "Task Resources:")), "PROCS:"))
	case strings.HasPrefix(l, "Attributes ("):
		if _, rest, ok := strings.Cut(l, "HostList='"); ok {
			d.HostList, _, _ = strings.Cut(rest, "'")
		}
	}
}

// parseACL reads "RES==gridres1= USER==griduser+ GROUP==grid+" terms.
// Several entries of one type are printed as one term joined by ':', each
// after the first starting with its comparison: "ACCT==proj1+:==la.acct0+*"
// (Maui 3.3.1 MACLListShow). Mod is what follows the name: one affinity
// ('+', '=', '-') and the flags ('*' required, '!' deny, '^' XOR). Maui
// prints one affinity character, so anything before it belongs to the
// name: a reservation restored from Maui's checkpoint shows
// "USER==alice++*", whose name is "alice+" (Maui re-read "alice+*" as a
// name), and such an ACL admits no job of alice.
func parseACL(s string) []ACLEntry {
	var out []ACLEntry
	for _, t := range strings.Fields(s) {
		typ, rest, ok := strings.Cut(t, "==")
		if !ok || typ == "" {
			continue
		}
		for _, v := range strings.Split(rest, ":==") {
			if e, ok := aclTerm(typ, v); ok {
				out = append(out, e)
			}
		}
	}
	return out
}

// aclTerm splits "alice+*" into name "alice" and Mod "+*": the flags at
// the end, then at most one affinity character.
func aclTerm(typ, v string) (ACLEntry, bool) {
	name := strings.TrimRight(v, "^*!")
	if n := len(name); n > 0 && strings.ContainsRune("+-=", rune(name[n-1])) {
		name = name[:n-1]
	}
	if strings.ContainsAny(name[len(name)-min(len(name), 1):], "^*!") {
		name = strings.TrimRight(v, "+-=^*!") // not Maui's order: no name keeps a flag
	}
	if name == "" {
		return ACLEntry{}, false
	}
	return ACLEntry{Type: typ, Name: name, Mod: v[len(name):]}, true
}

// MadeName is the name an ACL entry was made with, from the name Maui
// lists: a reservation Maui restored from its checkpoint lists a required
// entry made as "alice" under the name "alice+" (the checkpoint holds
// "alice+*" and Maui 3.3.1 reads one modifier back, the '*', keeping the
// '+' in the name; one '+' more at each restart). The one place this rule
// lives. A restored name is not the name made: Maui compares names whole,
// so the entry admits no job of alice (seen live: a part submitted as
// alice with its binding account stayed idle, "rejected: ReserveTime",
// until the reservation was made again; agent/testdata/maui/
// live-restart-refused). Use it to know an account a restored reservation
// still binds, never to take a restored ACL for the one made.
func MadeName(listed string) string { return strings.TrimRight(listed, "+") }

// Restored reports whether listed is the name made as a Maui restart
// lists it (MadeName): a different name, which admits no job of made.
func Restored(made, listed string) bool {
	return made != "" && listed != made && MadeName(listed) == made
}

// Required reports whether the entry must match (Maui's '*' flag): a job
// lacking it is refused whatever else matches.
func (a ACLEntry) Required() bool { return strings.Contains(a.Mod, "*") }
