//go:build unix && !linux

package redisproc

import "syscall"

const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// procAttr is nil: only Linux can tie the server's life to the test
// binary's; elsewhere Cleanup stops it, and a crashed test binary leaves
// it running.
func procAttr() *syscall.SysProcAttr { return nil }
