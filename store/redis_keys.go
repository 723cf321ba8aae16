package store

import "strconv"

// redisKeys names the keys of one Redis store. Every key starts with the
// configured prefix, then the layout's version (redisLayout), so that a
// replica of another layout never reads these keys as its own. Variable
// parts before the last one are length-prefixed ("5:alpha"), so that any
// agent, owner or id (colons included) maps to its own key; the last part is
// written as is.
//
//	<prefix>v2:{<agent>}t:<id>            hash: one task (owner, backend, ctx, state, upd, exp)
//	<prefix>v2:{<agent>}c:<context>       string: "<expiry µs>|<owner>" of a context
//	<prefix>v2:{<agent>}b:<owner>:all     sorted set: the owner's tasks, score -Updated
//	<prefix>v2:{<agent>}b:<owner>:exp     sorted set: the same, score expiry
//	<prefix>v2:{<agent>}b:<owner>:fin     sorted set: the final tasks, score last put (eviction)
//	<prefix>v2:{<agent>}b:<owner>:c:<ctx> sorted set: the owner's tasks in one context, score -Updated
//	<prefix>v2:{<agent>}o                 set: the owners with indexes, for Len
//	<prefix>v2:{<agent>}rs:<owner>        sorted set: the owner's send records by key, score last write (its share)
//	<prefix>v2:agents                     set: the agents with keys, for Len and Known
//	<prefix>{<agent>}r:<owner>:<key>      string: a send's record for retries (redis_retry.go)
//
// The send records keep the key of the first layout, whose format they
// share: during a rolling upgrade a retry finds its send's record whichever
// replica made it, so that it is not sent to the backend again.
//
// The braces are Redis Cluster hash tags: every key of one agent hashes to
// the same slot (the prefix and version are outside the tag), so that each
// script (which reads and writes a task, its owner's indexes and its context
// at once) touches one slot, as Cluster requires. The tag is the agent
// rather than the agent and the owner: a task's and a context's holder must
// be read in the script that writes the caller's indexes, whoever the holder
// is. Only the agents set is not per agent: Put's script writes it on one
// node, a command of its own in its pipeline on a cluster. The prefix may
// not hold braces (Validate), so the tag is always the agent's.
//
// A task's id and agent are not in its hash: its key names them.
//
// Scores of the List index are -Updated in microseconds, so that ascending
// score order with Redis's byte order on ties is exactly List order (newest
// first, ties by ID); microseconds keep the scores exact in a float64.
// The owners set is what Len sums over (each owner's live tasks are its
// exp index's): a put adds its owner when it renews the owner's indexes,
// once per renewal window, rather than each put writing a count. It
// replaced an agent's task count (n, a sorted set of every task) within
// layout v2: a replica of either reads only its own for Len, so during a
// rolling upgrade the index-size metric undercounts the other's tasks
// while nothing else differs.
type redisKeys struct {
	prefix string
}

// redisLayout is the version segment of the task keys. The first layout
// had none: its keys follow the prefix with "{", "i:" or "agents".
const redisLayout = "v2:"

func lengthPrefixed(s string) string {
	return strconv.Itoa(len(s)) + ":" + s
}

// agentTag is the hash tag of agent's keys.
func agentTag(agent string) string { return "{" + lengthPrefixed(agent) + "}" }

// agentSlot is the common start of the keys of agent, hash tag included.
func (k redisKeys) agentSlot(agent string) string {
	return k.prefix + redisLayout + agentTag(agent)
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

// expIndex is an owner's tasks by expiry, the index its live tasks are
// counted in.
func (a agentKeys) expIndex(owner string) string { return a.bucket(owner) + ":exp" }

func (a agentKeys) owners() string { return string(a) + "o" }

// sends is the index of owner's send records, by which their number is
// bounded as the owner's tasks are.
func (a agentKeys) sends(owner string) string { return string(a) + "rs:" + owner }

func (k redisKeys) task(agent, id string) string { return k.agent(agent).taskPrefix() + id }

func (k redisKeys) bucket(agent, owner string) string { return k.agent(agent).bucket(owner) }

func (k redisKeys) context(agent, contextID string) string { return k.agent(agent).context(contextID) }

func (k redisKeys) agents() string {
	return k.prefix + redisLayout + "agents"
}
