package store

import "strconv"

// redisKeys names the keys of one Redis store. Every key starts with the
// configured prefix. Variable parts before the last one are length-prefixed
// ("5:alpha"), so that any agent, owner or id (colons included) maps to its
// own key; the last part is written as is.
//
//	<prefix>{<agent>}t:<id>            hash: one task
//	<prefix>{<agent>}c:<context>       hash: owner and expiry of a context
//	<prefix>{<agent>}b:<owner>:all     sorted set: the owner's tasks, score -Updated
//	<prefix>{<agent>}b:<owner>:s:<st>  sorted set: the same, in state st
//	<prefix>{<agent>}b:<owner>:c:<cx>  sorted set: the same, in context cx
//	<prefix>{<agent>}b:<owner>:exp     sorted set: the same, score expiry
//	<prefix>{<agent>}b:<owner>:meta    hash: id -> state and context, for purging
//	<prefix>{<agent>}b:<owner>:fin     sorted set: the final tasks, score last put (eviction)
//	<prefix>{<agent>}n                 sorted set: the agent's tasks as <len>:<owner>:<id>, score expiry (Len)
//	<prefix>{<agent>}r:<owner>:<key>   string: a send's record for retries (redis_retry.go)
//	<prefix>i:<id>                     sorted set: the agents holding the id, score expiry
//	<prefix>agents                     set: the agents with keys, for Len
//
// The braces are Redis Cluster hash tags: every key of one agent hashes to
// the same slot, so that each script (which reads and writes a task, its
// owner's indexes and its context at once) touches one slot, as Cluster
// requires. The tag is the agent rather than the agent and the owner: a
// task's and a context's holder must be read in the script that writes the
// caller's indexes, whoever the holder is. The keys that are not per agent
// (i:<id>, read by Known across agents, and agents) are written by Put's
// script on one node, and by commands of their own in its pipeline on a
// cluster. The prefix may not hold braces (Validate), so the tag is always
// the agent's.
//
// Scores of the List indexes are -Updated in microseconds, so that ascending
// score order with Redis's byte order on ties is exactly List order (newest
// first, ties by ID); microseconds keep the scores exact in a float64.
// A member of n names its owner so that a task id taken over by another
// owner after expiry is a new member, while the old one ages out by its
// score.
type redisKeys struct {
	prefix string
}

func lengthPrefixed(s string) string {
	return strconv.Itoa(len(s)) + ":" + s
}

// agentSlot is the common start of the keys of agent, hash tag included.
func (k redisKeys) agentSlot(agent string) string {
	return k.prefix + "{" + lengthPrefixed(agent) + "}"
}

// agent returns the keys of one agent, for a call that names several:
// the slot's start is built once.
func (k redisKeys) agent(agent string) agentKeys { return agentKeys(k.agentSlot(agent)) }

// agentKeys names the keys in one agent's slot; it is their common start.
type agentKeys string

// taskPrefix is the task key without the id, for scripts that derive task
// keys from index members.
func (a agentKeys) taskPrefix() string { return string(a) + "t:" }

func (a agentKeys) contextPrefix() string { return string(a) + "c:" }

func (a agentKeys) context(contextID string) string { return a.contextPrefix() + contextID }

// bucket is the common start of the index keys of an owner; scripts
// append the suffixes.
func (a agentKeys) bucket(owner string) string { return string(a) + "b:" + lengthPrefixed(owner) }

func (a agentKeys) count() string { return string(a) + "n" }

func (k redisKeys) task(agent, id string) string { return k.agent(agent).taskPrefix() + id }

func (k redisKeys) bucket(agent, owner string) string { return k.agent(agent).bucket(owner) }

func (k redisKeys) context(agent, contextID string) string { return k.agent(agent).context(contextID) }

func (k redisKeys) count(agent string) string { return k.agent(agent).count() }

func (k redisKeys) ids(id string) string {
	return k.prefix + "i:" + id
}

func (k redisKeys) agents() string {
	return k.prefix + "agents"
}
