package policy

// A LimitKind is one resource a sandbox's use of can be limited
// (limits.*).
type LimitKind string

// The resource limits, in the order a plan writes them.
const (
	// LimitMemory is limits.memoryMiB: the sandbox's memory, in MiB.
	LimitMemory LimitKind = "memory-mib"
	// LimitProcesses is limits.processes: processes and threads.
	LimitProcesses LimitKind = "processes"
	// LimitCPU is limits.cpuSeconds: CPU time, in seconds.
	LimitCPU LimitKind = "cpu-seconds"
	// LimitOpenFiles is limits.openFiles: open descriptors per process.
	LimitOpenFiles LimitKind = "open-files"
)

// LimitKinds are the kinds, in plan order, with the settings key of each.
var LimitKinds = []struct {
	Kind LimitKind
	Key  string
}{
	{LimitMemory, "limits.memoryMiB"},
	{LimitProcesses, "limits.processes"},
	{LimitCPU, "limits.cpuSeconds"},
	{LimitOpenFiles, "limits.openFiles"},
}

// A Limit is one resource limit of every sandbox of the policy.
type Limit struct {
	Kind   LimitKind `json:"kind"`
	Value  int64     `json:"value"`
	Origin Origin    `json:"origin"`
}
