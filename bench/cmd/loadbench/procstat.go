package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc. It is 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU returns the CPU time (user + system) process pid has used.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime from a /proc/PID/stat line. The
// command name, in parentheses, may hold spaces and parentheses itself, so
// the fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name in %q", stat)
	}
	// Fields after the name start at field 3 (state); utime and stime are
	// fields 14 and 15.
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc stat: utime %q stime %q", f[11], f[12])
	}
	return ticks(utime + stime), nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// procMemory returns the resident set size of pid now and at its peak.
func procMemory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStatusMemory(b)
}

// parseStatusMemory reads VmRSS and VmHWM, in bytes, from /proc/PID/status.
func parseStatusMemory(status []byte) (rss, peak int64, err error) {
	found := 0
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &rss
		case "VmHWM":
			dst = &peak
		default:
			continue
		}
		f := strings.Fields(string(value))
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("proc status: %s is %q", name, value)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("proc status: %s: %w", name, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("proc status: VmRSS or VmHWM missing")
	}
	return rss, peak, nil
}

// machineCPU is the busy and total CPU time of the whole machine, from the
// first line of /proc/stat, to tell how much else ran during a measurement.
type machineCPU struct{ busy, total time.Duration }

func readMachineCPU() (machineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	return parseMachineCPU(b)
}

// parseMachineCPU reads the aggregate "cpu" line: user nice system idle
// iowait irq softirq steal [guest guest_nice]. Guest time is already in
// user, so it is not added again; idle and iowait are not busy.
func parseMachineCPU(stat []byte) (machineCPU, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return machineCPU{}, fmt.Errorf("proc stat: unexpected first line %q", line)
	}
	var m machineCPU
	for i, s := range f[1:9] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("proc stat: %w", err)
		}
		m.total += ticks(n)
		if i != 3 && i != 4 {
			m.busy += ticks(n)
		}
	}
	return m, nil
}
