// Package kaudit speaks to the Linux kernel's audit over NETLINK_AUDIT
// (include/uapi/linux/audit.h, kernel/audit.c): its status, turning it on
// or off (for tests), and the framing of the records its multicast group
// delivers. The runtime reads the second layer's refusals with it
// (runtime/sandbox/landlock_audit_linux.go).
package kaudit
