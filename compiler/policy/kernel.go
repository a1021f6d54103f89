package policy

// A KernelPath is a kernel interface that every Linux sandbox covers,
// whatever the settings say: the command would otherwise reach the host
// kernel through it. The list follows the read-only and masked paths that
// container runtimes (runc, Docker) apply by default.
//
// These matter most when srt runs as root. The sandbox's uid 0 is then the
// host's uid 0, and the kernel checks only the uid for /proc/sys: without
// a read-only /proc/sys the command could set kernel.core_pattern to a
// program of its own, which the kernel runs as host root at the next crash
// of any process. bubblewrap tries to make /proc/sys read-only itself, but
// skips it when its access check fails, which it does for root. For an
// unprivileged caller the same paths are already refused by permissions;
// covering them costs a mount each.
type KernelPath struct {
	// Path is absolute, below /proc or /sys.
	Path string
	// Mask hides the path (an empty read-only directory, or /dev/null for
	// a file) where it exists; otherwise the path is made read-only.
	Mask bool
	// Why is the reason, written into linux/bwrap.args and shown by explain.
	Why string
}

// KernelPaths are covered in this order, after /proc is mounted. Read-only
// paths first: a mask below one of them must be mounted on top.
var KernelPaths = []KernelPath{
	{"/proc/sys", false, "kernel settings: a root caller's sandbox could write the host's sysctls (kernel.core_pattern runs a program as host root)"},
	{"/proc/sysrq-trigger", false, "magic SysRq: a root caller's sandbox could reboot or crash the host"},
	{"/proc/irq", false, "interrupt affinity of the host's devices"},
	{"/proc/bus", false, "the host's PCI and USB device registers"},
	{"/proc/fs", false, "file-system driver settings (nfsd, …) of the host"},
	{"/proc/kcore", true, "the host's physical memory as an ELF core"},
	{"/proc/keys", true, "the kernel keys the caller can view"},
	{"/proc/key-users", true, "per-user key quotas of the host"},
	{"/proc/latency_stats", true, "kernel latency statistics (addresses of kernel functions)"},
	{"/proc/timer_list", true, "the host's timers, with kernel addresses and other processes' names"},
	{"/proc/timer_stats", true, "timer statistics of every process on the host"},
	{"/proc/sched_debug", true, "the host's scheduler state, with every process's name"},
	{"/proc/scsi", true, "SCSI device control of the host"},
	{"/proc/acpi", true, "ACPI control of the host"},
	{"/proc/asound", true, "the host's sound devices"},
	{"/sys/firmware", true, "firmware tables (ACPI, EFI variables, SMBIOS serial numbers)"},
	{"/sys/devices/virtual/powercap", true, "CPU energy counters (a side channel on other processes)"},
}

// Namespaces are the namespaces every Linux sandbox gets of its own besides
// mount, user, PID and network, with the reason. A cgroup namespace is
// taken where the kernel offers one.
var Namespaces = []struct{ Arg, Why string }{
	{"--unshare-ipc", "System V IPC and POSIX message queues: host processes' shared memory and queues would be a channel around every other rule"},
	{"--unshare-uts", "host and domain name: a root caller's sandbox could rename the host"},
	{"--unshare-cgroup-try", "the cgroup tree: the command sees its own cgroup as the root (where the kernel has cgroup namespaces)"},
}
