// Command loadbench measures the gateway side by side with plain
// pass-through proxies under load, in one run on one machine, and holds the
// results against the performance targets; see bench/README.md.
//
//	loadbench run -gateway BIN [-smoke] [-out DIR] ...  measure everything
//	loadbench report -in latest.json [-out DIR]         render a saved run again
//	loadbench instr -gateway BIN [-only RE]             instructions per request (callgrind)
//	loadbench backend -listen ADDR                      the canned A2A agent
//	loadbench revproxy -listen ADDR -upstream URL       the Go plain proxy
//
// Every system under test runs as its own process, started fresh for each
// measurement so that its peak memory is that measurement's: the canned
// backend called directly, httputil.ReverseProxy, nginx, and the gateway
// binary in each configuration. The load generator is this process: one
// goroutine per keep-alive connection, each sending its next request as
// soon as the previous answer is read (closed loop). CPU time and memory
// come from /proc. With two or more CPUs the system under test is pinned to
// CPU 0 and everything else to CPU 1, so that it has one core to itself and
// its figures do not depend on how the scheduler shares the machine.
package main
