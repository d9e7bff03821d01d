package forecast

// NodeJob is a job that pbsnodes lists on a node, with the processor
// indexes (Torque's execution slots) it holds there.
type NodeJob struct {
	Job   string `json:"job"`
	Slots []int  `json:"slots"`
}
