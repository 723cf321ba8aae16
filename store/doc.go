// Package store is the gateway's task index: it records every task the
// gateway sees created, with its owner, so that the proxy can enforce task
// ownership (a caller sees only its own tasks) and answer the 1.0 ListTasks
// call for backends that cannot.
//
// Two implementations satisfy [Store]: [Memory], bounded and local to one
// process, and [Redis], shared by several gateway replicas. Both pass one
// conformance suite, so callers can treat them alike.
//
// Package store imports nothing from this module except package dialect, and
// never logs: every failure is returned to the caller, and failures of the
// backing service wrap [ErrUnavailable] so the caller can fail closed. (The
// go-redis client under [Redis] reports failed dials through its own
// process-wide logger; the program chooses where that goes with
// redis.SetLogger.)
package store
