package seatbelt

// The fixed base allowances of every profile (docs/reference.md#macos-base),
// in the reference's order. They are single-line rules without a message.

// baseHead comes before the optional Mach blocks.
var baseHead = []string{
	"(allow process-exec)",
	"(allow process-fork)",
	"(allow process-info* (target same-sandbox))",
	"(allow signal (target same-sandbox))",
	"(allow mach-priv-task-port (target same-sandbox))",
	"(allow user-preference-read)",
	"(allow mach-lookup",
	`  (global-name "com.apple.audio.systemsoundserver")`,
	`  (global-name "com.apple.distributed_notifications@Uv3")`,
	`  (global-name "com.apple.FontObjectsServer")`,
	`  (global-name "com.apple.fonts")`,
	`  (global-name "com.apple.logd")`,
	`  (global-name "com.apple.lsd.mapdb")`,
	`  (global-name "com.apple.PowerManagement.control")`,
	`  (global-name "com.apple.system.logger")`,
	`  (global-name "com.apple.system.notification_center")`,
	`  (global-name "com.apple.system.opendirectoryd.libinfo")`,
	`  (global-name "com.apple.system.opendirectoryd.membership")`,
	`  (global-name "com.apple.bsd.dirhelper")`,
	`  (global-name "com.apple.securityd.xpc")`,
	`  (global-name "com.apple.coreservices.launchservicesd"))`,
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
var baseTail = []string{
	"(allow ipc-posix-shm)",
	"(allow ipc-posix-sem)",
	"(allow iokit-open",
	`  (iokit-registry-entry-class "IOSurfaceRootUserClient")`,
	`  (iokit-registry-entry-class "RootDomainUserClient")`,
	`  (iokit-user-client-class "IOSurfaceSendRight"))`,
	"(allow iokit-get-properties)",
	"(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))",
	"SYSCTL",
	`(allow sysctl-write (sysctl-name "kern.tcsm_enable"))`,
	"(allow distributed-notification-post)",
	`(allow mach-lookup (global-name "com.apple.SecurityServer"))`,
	`(allow file-ioctl (literal "/dev/null"))`,
	`(allow file-ioctl (literal "/dev/zero"))`,
	`(allow file-ioctl (literal "/dev/random"))`,
	`(allow file-ioctl (literal "/dev/urandom"))`,
	`(allow file-ioctl (literal "/dev/dtracehelper"))`,
	`(allow file-ioctl (literal "/dev/tty"))`,
	`(allow file-ioctl file-read-data file-write-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))`,
}

// sysctlRead is the sysctl-read rule, one filter per line.
func sysctlRead() []string {
	out := []string{"(allow sysctl-read"}
	for _, n := range sysctlNames {
		out = append(out, `  (sysctl-name "`+n+`")`)
	}
	for i, n := range sysctlPrefixes {
		line := `  (sysctl-name-prefix "` + n + `")`
		if i == len(sysctlPrefixes)-1 {
			line += ")"
		}
		out = append(out, line)
	}
	return out
}

// Optional non-file blocks (docs/reference.md#macos-optional-blocks).
var (
	weakerNetworkIsolation = []string{`(allow mach-lookup (global-name "com.apple.trustd.agent"))`}
	appleEvents            = []string{
		"(allow appleevent-send)",
		`(allow mach-lookup (global-name "com.apple.coreservices.appleevents"))`,
		"(allow lsopen)",
		`(allow mach-lookup (global-name "com.apple.CoreServices.coreservicesd"))`,
		`(allow mach-lookup (global-name "com.apple.coreservices.quarantine-resolver"))`,
	}
	pty = []string{
		"(allow pseudo-tty)",
		`(allow file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys"))`,
		`(allow file-read* file-write* (literal "/dev/ptmx") (regex #"^/dev/ttys"))`,
	}
)
