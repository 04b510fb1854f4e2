package redisproc

import "syscall"

// Windows has no SIGSTOP or SIGCONT: Pause and Resume fail the test there
// (os.Process.Signal refuses them), and Debian's redis-server, which these
// tests run, does not exist there either.
const (
	sigStop = syscall.Signal(0x13)
	sigCont = syscall.Signal(0x12)
)

func procAttr() *syscall.SysProcAttr { return nil }
