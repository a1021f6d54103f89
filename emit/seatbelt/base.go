package seatbelt

import "srt.dev/compiler/policy"

// The fixed base allowances of every profile (docs/reference.md#macos-base),
// in the reference's order. They carry no message.

// fixed is a one-line built-in allow.
func fixed(ops []string, filters ...Filter) Rule {
	return Rule{Action: Allow, Ops: ops, Filters: filters, Step: StepBase}
}

// block is a built-in allow written one filter per line.
func block(op string, filters ...Filter) Rule {
	r := fixed([]string{op}, filters...)
	r.Form = FormBlock
	return r
}

// other is a filter on what no file question asks about, as written.
func other(s string) Filter { return Filter{Kind: Other, Text: s, Origin: builtin}.withText() }

// lit is a built-in literal path filter.
func lit(p string) Filter { return Filter{Kind: Literal, Str: text(p), Origin: builtin}.withText() }

// ops is a list of operations.
func ops(o ...string) []string { return o }

// globalNames are global-name filters.
func globalNames(names ...string) []Filter {
	var out []Filter
	for _, n := range names {
		out = append(out, Filter{Kind: GlobalName, Str: text(n), Origin: builtin}.withText())
	}
	return out
}

// baseHead comes before the optional Mach blocks.
var baseHead = []Rule{
	fixed(ops("process-exec")),
	fixed(ops("process-fork")),
	fixed(ops("process-info*"), other("(target same-sandbox)")),
	fixed(ops("signal"), other("(target same-sandbox)")),
	fixed(ops("mach-priv-task-port"), other("(target same-sandbox)")),
	fixed(ops("user-preference-read")),
	block("mach-lookup", globalNames(
		"com.apple.audio.systemsoundserver",
		"com.apple.distributed_notifications@Uv3",
		"com.apple.FontObjectsServer",
		"com.apple.fonts",
		"com.apple.logd",
		"com.apple.lsd.mapdb",
		"com.apple.PowerManagement.control",
		"com.apple.system.logger",
		"com.apple.system.notification_center",
		"com.apple.system.opendirectoryd.libinfo",
		"com.apple.system.opendirectoryd.membership",
		"com.apple.bsd.dirhelper",
		"com.apple.securityd.xpc",
		"com.apple.coreservices.launchservicesd")...),
}

// sysctlNames may be read by exact name (49 names, in this order).
var sysctlNames = []string{
	"hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig", "hw.cachelinesize_compat",
	"hw.cpufamily", "hw.cpufrequency", "hw.cpufrequency_compat", "hw.cputype", "hw.l1dcachesize_compat",
	"hw.l1icachesize_compat", "hw.l2cachesize_compat", "hw.l3cachesize_compat", "hw.logicalcpu",
	"hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.ncpu", "hw.nperflevels", "hw.packages",
	"hw.pagesize_compat", "hw.pagesize", "hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat",
	"hw.vectorunit", "kern.argmax", "kern.bootargs", "kern.hostname", "kern.maxfiles", "kern.maxfilesperproc",
	"kern.maxproc", "kern.ngroups", "kern.osproductversion", "kern.osrelease", "kern.ostype",
	"kern.osvariant_status", "kern.osversion", "kern.secure_kernel", "kern.tcsm_available", "kern.tcsm_enable",
	"kern.usrstack64", "kern.version", "kern.willshutdown", "machdep.cpu.brand_string",
	"machdep.ptrauth_enabled", "security.mac.lockdown_mode_state", "sysctl.proc_cputype", "vm.loadavg",
}

// sysctlPrefixes may be read by prefix.
var sysctlPrefixes = []string{
	"hw.optional.arm", "hw.optional.arm.", "hw.optional.armv8_", "hw.perflevel", "kern.proc.all",
	"kern.proc.pgrp.", "kern.proc.pid.", "machdep.cpu.", "net.routetable.",
}

// baseTail comes after the optional Mach blocks and before the network.
var baseTail = []Rule{
	fixed(ops("ipc-posix-shm")),
	fixed(ops("ipc-posix-sem")),
	block("iokit-open",
		other(`(iokit-registry-entry-class "IOSurfaceRootUserClient")`),
		other(`(iokit-registry-entry-class "RootDomainUserClient")`),
		other(`(iokit-user-client-class "IOSurfaceSendRight")`)),
	fixed(ops("iokit-get-properties")),
	fixed(ops("system-socket"), Filter{Kind: RequireAll, Origin: builtin, Args: []Filter{other("(socket-domain AF_SYSTEM)"), other("(socket-protocol 2)")}}),
	sysctlRead(),
	fixed(ops("sysctl-write"), other(`(sysctl-name "kern.tcsm_enable")`)),
	fixed(ops("distributed-notification-post")),
	fixed(ops("mach-lookup"), globalNames("com.apple.SecurityServer")...),
	fixed(ops("file-ioctl"), lit("/dev/null")),
	fixed(ops("file-ioctl"), lit("/dev/zero")),
	fixed(ops("file-ioctl"), lit("/dev/random")),
	fixed(ops("file-ioctl"), lit("/dev/urandom")),
	fixed(ops("file-ioctl"), lit("/dev/dtracehelper")),
	fixed(ops("file-ioctl"), lit("/dev/tty")),
	fixed(ops("file-ioctl", "file-read-data", "file-write-data"),
		Filter{Kind: RequireAll, Origin: builtin, Args: []Filter{lit("/dev/null"), Filter{Kind: VnodeType, Text: "CHARACTER-DEVICE", Origin: builtin}.withText()}}),
}

// sysctlRead is the sysctl-read rule, one filter per line.
func sysctlRead() Rule {
	var fs []Filter
	for _, n := range sysctlNames {
		fs = append(fs, other(`(sysctl-name "`+n+`")`))
	}
	for _, n := range sysctlPrefixes {
		fs = append(fs, other(`(sysctl-name-prefix "`+n+`")`))
	}
	return block("sysctl-read", fs...)
}

// Optional non-file blocks (docs/reference.md#macos-optional-blocks).
var (
	weakerNetworkIsolation = []Rule{fixed(ops("mach-lookup"), globalNames("com.apple.trustd.agent")...)}
	appleEvents            = []Rule{
		fixed(ops("appleevent-send")),
		fixed(ops("mach-lookup"), globalNames("com.apple.coreservices.appleevents")...),
		fixed(ops("lsopen")),
		fixed(ops("mach-lookup"), globalNames("com.apple.CoreServices.coreservicesd")...),
		fixed(ops("mach-lookup"), globalNames("com.apple.coreservices.quarantine-resolver")...),
	}
	ttys = Filter{Kind: Regex, Str: Str{{Text: "^/dev/ttys", Raw: true}}, Origin: builtin}.withText()
	pty  = []Rule{
		fixed(ops("pseudo-tty")),
		fixed(ops("file-ioctl"), lit("/dev/ptmx"), ttys),
		fixed(ops("file-read*", "file-write*"), lit("/dev/ptmx"), ttys),
	}
)

// builtin is the origin of the built-in rules.
var builtin = policy.Default
