package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The usage-limit check before its credentials were interned (credUsage
// by name, a map lookup per credential and check): the oracle of
// TestInternedLimitsSameAnswers and the baseline of BenchmarkLimitCheck.

type legacyUsage struct {
	by [credKinds]map[string]*[limitKinds]int64
}

func (u *legacyUsage) add(j *job, rem int64) {
	d := jobUse(j, rem)
	for c := range CredKind(credKinds) {
		if u.by[c] == nil {
			u.by[c] = map[string]*[limitKinds]int64{}
		}
		n := credName(j, c)
		v := u.by[c][n]
		if v == nil {
			v = new([limitKinds]int64)
			u.by[c][n] = v
		}
		for k := range d {
			v[k] += d[k]
		}
	}
}

func (l *Limits) legacyBlocks(u *legacyUsage, j *job, lv limitLevel) bool {
	d := jobUse(j, j.Walltime)
	for c := range CredKind(credKinds) {
		name := credName(j, c)
		own, hasOwn := l.Cred[c][name]
		def, hasDef := l.Cred[c]["DEFAULT"]
		if !hasOwn && !hasDef {
			continue
		}
		var used *[limitKinds]int64
		if u.by[c] != nil {
			used = u.by[c][name]
		}
		for k := range d {
			var lim int64
			switch {
			case hasOwn && own.Hard[k] != 0:
				lim = pickLevel(own, k, lv)
			case hasDef && def.Hard[k] != 0:
				lim = pickLevel(def, k, lv)
			}
			if lim <= 0 {
				continue
			}
			have := d[k]
			if used != nil {
				have += used[k]
			}
			if have > lim {
				return true
			}
		}
	}
	return false
}

func pickLevel(v Limit, k int, lv limitLevel) int64 {
	if lv == levelSoft {
		return v.Soft[k]
	}
	return v.Hard[k]
}

// randomLimits sets random soft/hard limits on a few named credentials
// and DEFAULT entries of every kind.
func randomLimits(r *rand.Rand) *Limits {
	l := &Limits{}
	names := []string{"DEFAULT", "a", "b", "c"}
	for c := range CredKind(credKinds) {
		for _, n := range names {
			if r.IntN(2) == 0 {
				continue
			}
			for k := range LimitKind(limitKinds) {
				if r.IntN(3) == 0 {
					continue
				}
				hard := int64(r.IntN(6))
				if k >= LimitPS {
					hard *= 3000
				}
				l.set(c, n, k, hard-r.Int64N(hard+1), hard) // soft may be 0
			}
		}
	}
	return l
}

func randomLimitJobs(r *rand.Rand, n int) []*job {
	names := []string{"a", "b", "c", "d"}
	pick := func() string { return names[r.IntN(len(names))] }
	var out []*job
	for k := range n {
		j := newJob(Job{ID: fmt.Sprint(k), Procs: 1 + r.IntN(4), Walltime: int64(100 + r.IntN(3000)),
			User: pick(), Group: pick(), Account: pick(), Queue: pick(), QOS: []string{"", "a", "b"}[r.IntN(3)]}, k)
		out = append(out, j)
	}
	return out
}

// TestInternedLimitsSameAnswers: the interned check answers as the check
// by name did, at both levels, for random limits, usage and jobs.
func TestInternedLimitsSameAnswers(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 11))
		l := randomLimits(r)
		var u credUsage
		var old legacyUsage
		jobs := randomLimitJobs(r, 30)
		for _, j := range jobs[:r.IntN(15)] {
			rem := int64(r.IntN(2000))
			u.add(l, j, rem)
			old.add(j, rem)
		}
		for _, j := range jobs {
			hard, soft := l.blocksBoth(&u, j)
			for _, lv := range []limitLevel{levelSoft, levelHard} {
				want := l.legacyBlocks(&old, j, lv)
				if got := l.blocks(&u, j, lv); got != want {
					t.Fatalf("seed %d, job %s, level %d: interned %v, by name %v", seed, j.ID, lv, got, want)
				}
				if both := map[limitLevel]bool{levelSoft: soft, levelHard: hard}[lv]; both != want {
					t.Fatalf("seed %d, job %s, level %d: blocksBoth %v, by name %v", seed, j.ID, lv, both, want)
				}
			}
		}
		u.reset()
		for _, j := range jobs {
			if l.blocks(&u, j, levelHard) != l.legacyBlocks(&legacyUsage{}, j, levelHard) {
				t.Fatalf("seed %d: after reset, job %s answers differently from no usage", seed, j.ID)
			}
		}
	}
}

// BenchmarkLimitCheck: the interned check against the check by name (the
// baseline), 1,000 queued jobs checked at both levels with 200 running.
func BenchmarkLimitCheck(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	l := randomLimits(r)
	jobs := randomLimitJobs(r, 1200)
	b.Run("interned", func(b *testing.B) {
		var u credUsage
		for _, j := range jobs[:200] {
			u.add(l, j, 500)
		}
		for b.Loop() {
			for _, j := range jobs[200:] {
				l.blocks(&u, j, levelSoft)
				l.blocks(&u, j, levelHard)
			}
		}
	})
	b.Run("byname", func(b *testing.B) {
		var u legacyUsage
		for _, j := range jobs[:200] {
			u.add(j, 500)
		}
		for b.Loop() {
			for _, j := range jobs[200:] {
				l.legacyBlocks(&u, j, levelSoft)
				l.legacyBlocks(&u, j, levelHard)
			}
		}
	})
}
