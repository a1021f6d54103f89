package quarantine

import "syscall"

const syscallEXDEV = syscall.EXDEV
