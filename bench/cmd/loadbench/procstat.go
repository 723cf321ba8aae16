package main

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/procfs"
)

// procCPU returns the CPU time (user + system) process pid has used.
func procCPU(pid int) (time.Duration, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return seconds(st.CPUTime()), nil
}

// procMemory returns the resident set size of pid now and at its peak.
func procMemory(pid int) (rss, peak int64, err error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, 0, err
	}
	// A process that has exited but not been reaped has no memory lines.
	if st.VmHWM == 0 {
		return 0, 0, fmt.Errorf("proc %d status: no VmHWM", pid)
	}
	return int64(st.VmRSS), int64(st.VmHWM), nil
}

// machineCPU is the busy and total CPU time of the whole machine, from
// /proc/stat, to tell how much else ran during a measurement.
type machineCPU struct{ busy, total time.Duration }

// readMachineCPU reads the aggregate CPU times. Guest time is already in
// user, so it is not added again; idle and iowait are not busy.
func readMachineCPU() (machineCPU, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return machineCPU{}, err
	}
	st, err := fs.Stat()
	if err != nil {
		return machineCPU{}, err
	}
	c := st.CPUTotal
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return machineCPU{busy: seconds(busy), total: seconds(busy + c.Idle + c.Iowait)}, nil
}

// processesNamed returns the PIDs of the processes whose command is name.
func processesNamed(name string) []int {
	procs, _ := procfs.AllProcs()
	var pids []int
	for _, p := range procs {
		if comm, err := p.Comm(); err == nil && comm == name {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// seconds is s seconds, which procfs reports as a float, to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
