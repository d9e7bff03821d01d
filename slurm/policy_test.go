package slurm

import (
	"strings"
	"testing"

	"lookahead/forecast/sim"
)

// The captured cluster's slurm.conf: backfill to Slurm's default depth,
// and the notes for what the simulator does not follow.
func TestPolicyOfCapturedConf(t *testing.T) {
	c, err := ReadConf(open(t, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Partitions) != 2 || c.Partitions[0].Nodes != "vm,ghost[1-2]" || len(c.Nodes) != 3 {
		t.Fatalf("conf = %+v", c)
	}
	p, notes, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Depth != 500 || p.Backfill != sim.FirstFit || p.NodeAlloc != sim.FirstAvailable || p.Priority != nil {
		t.Fatalf("policy = %+v", p)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"bf_interval=5", "bf_window=1440", "PriorityWeightAge=1000", "partitions with different nodes"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
}

func TestPolicyVariants(t *testing.T) {
	for _, tc := range []struct {
		conf  string
		depth int
		note  string
		bad   bool
	}{
		{"SchedulerType=sched/builtin\n", 0, "", false},
		{"SchedulerParameters=bf_max_job_test=20,bf_continue\n", 20, "bf_continue: not modelled", false},
		{"SchedulerParameters=bf_max_job_test=x\n", 0, "", true},
		{"SchedulerType=sched/wiki\n", 0, "", true},
		{"PreemptType=preempt/qos\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10\n", 500, "fair-share", false},
		{"Include /etc/slurm/nodes.conf\nPartitionName=p Nodes=ALL OverSubscribe=FORCE:4\n", 500, "OverSubscribe=FORCE:4", false},
		{`NodeName=a Reason="two words" CPUs=4` + "\n", 500, "", false},
		{"SelectTypeParameters=CR_Core_Memory\n", 500, "gets its nodes' whole memory", false},
		{"SelectTypeParameters=CR_Core_Memory\nDefMemPerCPU=500\n", 500, "counts processors only", false},
	} {
		c, err := ReadConf(strings.NewReader(tc.conf))
		if err != nil {
			t.Fatalf("%q: %v", tc.conf, err)
		}
		p, notes, err := c.Policy()
		if (err != nil) != tc.bad {
			t.Errorf("%q: err %v", tc.conf, err)
			continue
		}
		if tc.bad {
			continue
		}
		if p.Depth != tc.depth || !strings.Contains(strings.Join(notes, "\n"), tc.note) {
			t.Errorf("%q: depth %d notes %q", tc.conf, p.Depth, notes)
		}
	}
	if _, err := ReadConf(strings.NewReader("NodeName=a Reason=\"open\n")); err == nil {
		t.Error("an unterminated quote was read")
	}
	if _, err := ReadConf(strings.NewReader("just words\n")); err == nil {
		t.Error("a line without Key=Value was read")
	}
}
