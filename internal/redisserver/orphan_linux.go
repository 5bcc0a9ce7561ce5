package redisserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server exit when the process that started it
// dies, even by SIGKILL (a test binary killed by its timeout): no server is
// left behind holding a port and memory.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
