//go:build !linux

package main

import "syscall"

// childProcAttr is Linux's only: the benchmark measures on Linux, and
// elsewhere it only needs to build.
func childProcAttr() *syscall.SysProcAttr { return nil }
