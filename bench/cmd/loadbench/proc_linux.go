package main

import "syscall"

// childProcAttr puts a child in a process group of its own and kills it
// when the benchmark dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
