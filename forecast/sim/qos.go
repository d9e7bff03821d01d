package sim

import (
	"slices"
	"strings"
)

// DefaultQOS is Maui's QOS of jobs without one of their own (MQOS[0]).
const DefaultQOS = "DEFAULT"

// QOSAccess is which QOS a job may have, from USERCFG, GROUPCFG,
// ACCOUNTCFG and CLASSCFG QDEF= and QLIST= (the "or" lists; "&" and "^"
// lists are not modelled, and ReadMauiConfig says so). It is how Maui
// 3.3.1 gives a simulated job its QOS (MTraceLoadWorkload,
// MQOSGetAccess): the QOS the job asked for when it may have it, else
// the first default of its user, the DEFAULT user, its group, the DEFAULT
// group, its account, the DEFAULT account, its class and the DEFAULT
// class that it may have, else DEFAULT.
type QOSAccess struct {
	// Def and List by credential kind (CredUser…CredClass), then name
	// ("DEFAULT" for the DEFAULT entry).
	Def  [credKinds]map[string]string
	List [credKinds]map[string][]string
	// NoBackfill are the QOS with QFLAGS=NOBF: their jobs never backfill
	// (qosflags.go).
	NoBackfill map[string]bool
}

func (a *QOSAccess) setDef(c CredKind, name, q string) {
	if a.Def[c] == nil {
		a.Def[c] = map[string]string{}
	}
	a.Def[c][name] = q
}

func (a *QOSAccess) setList(c CredKind, name string, qs []string) {
	if a.List[c] == nil {
		a.List[c] = map[string][]string{}
	}
	a.List[c][name] = qs
}

// allowed is the job's QOS access list: DEFAULT, and per credential its
// own list and default, or the DEFAULT entry's when it has none.
func (a *QOSAccess) allowed(j *Job) []string {
	out := []string{DefaultQOS}
	for c := range CredKind(credKinds) {
		name := jobCred(j, c)
		l, own := a.List[c][name]
		d, ownDef := a.Def[c][name]
		if !own && !ownDef {
			l, d = a.List[c][DefaultQOS], a.Def[c][DefaultQOS]
		}
		out = append(out, l...)
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Of is the QOS Maui gives job j.
func (a *QOSAccess) Of(j Job) string {
	ok := a.allowed(&j)
	if j.QOS != "" && j.QOS != DefaultQOS && slices.Contains(ok, j.QOS) {
		return j.QOS
	}
	for c := range CredKind(credKinds) {
		for _, name := range []string{jobCred(&j, c), DefaultQOS} {
			if d := a.Def[c][name]; d != "" && d != DefaultQOS && slices.Contains(ok, d) {
				return d
			}
		}
	}
	return DefaultQOS
}

// jobCred is j's credential of kind c.
func jobCred(j *Job, c CredKind) string {
	switch c {
	case CredUser:
		return j.User
	case CredGroup:
		return j.Group
	case CredAccount:
		return j.Account
	}
	return j.Queue
}

// qosAttr reads QDEF= and QLIST= on a *CFG line; false for other keys.
func (c *cfgReader) qosAttr(kind, name, key, val string) bool {
	ck, ok := credKindOf[kind]
	if !ok || (key != "QDEF" && key != "QLIST") {
		return false
	}
	if strings.ContainsAny(val, "&^") {
		c.note("%s[%s] %s=%s: exclusive QOS lists (& and ^) are not modelled", kind, name, key, val)
		return true
	}
	if c.pol.QOS == nil {
		c.pol.QOS = &QOSAccess{}
	}
	if key == "QDEF" {
		c.pol.QOS.setDef(ck, name, val)
	} else {
		c.pol.QOS.setList(ck, name, strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ':' }))
	}
	return true
}
