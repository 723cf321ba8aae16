package store

import "strconv"

// redisKeys names the keys of one Redis store. Every key starts with the
// configured prefix. Variable parts before the last one are length-prefixed
// ("5:alpha"), so that any agent, owner or id (colons included) maps to its
// own key; the last part is written as is.
//
//	<prefix>t:<agent>:<id>           hash: one task
//	<prefix>c:<agent>:<context>      hash: owner and expiry of a context
//	<prefix>b:<agent>:<owner>:all    sorted set: the owner's tasks, score -Updated
//	<prefix>b:<agent>:<owner>:s:<st> sorted set: the same, in state st
//	<prefix>b:<agent>:<owner>:c:<cx> sorted set: the same, in context cx
//	<prefix>b:<agent>:<owner>:exp    sorted set: the same, score expiry
//	<prefix>b:<agent>:<owner>:meta   hash: id -> state and context, for purging
//	<prefix>b:<agent>:<owner>:fin    sorted set: the final tasks, score last put (eviction)
//	<prefix>i:<id>                   sorted set: the agents holding the id, score expiry
//	<prefix>n                        sorted set: every task, score expiry (Len)
//
// Scores of the List indexes are -Updated in microseconds, so that ascending
// score order with Redis's byte order on ties is exactly List order (newest
// first, ties by ID); microseconds keep the scores exact in a float64.
type redisKeys struct {
	prefix string
}

func lengthPrefixed(s string) string {
	return strconv.Itoa(len(s)) + ":" + s
}

// taskPrefix is the task key of agent without the id, for scripts that
// derive task keys from index members.
func (k redisKeys) taskPrefix(agent string) string {
	return k.prefix + "t:" + lengthPrefixed(agent) + ":"
}

func (k redisKeys) task(agent, id string) string {
	return k.taskPrefix(agent) + id
}

func (k redisKeys) contextPrefix(agent string) string {
	return k.prefix + "c:" + lengthPrefixed(agent) + ":"
}

func (k redisKeys) context(agent, contextID string) string {
	return k.contextPrefix(agent) + contextID
}

// bucket is the common start of the index keys of (agent, owner); scripts
// append the suffixes.
func (k redisKeys) bucket(agent, owner string) string {
	return k.prefix + "b:" + lengthPrefixed(agent) + ":" + lengthPrefixed(owner)
}

func (k redisKeys) idsPrefix() string {
	return k.prefix + "i:"
}

func (k redisKeys) ids(id string) string {
	return k.idsPrefix() + id
}

func (k redisKeys) count() string {
	return k.prefix + "n"
}

// countMember names a task in the count set. The owner is part of it so that
// a task id taken over by another owner after expiry is a new member, while
// the old one ages out by its score.
func countMember(agent, owner, id string) string {
	return countMemberPrefix(agent, owner) + id
}

func countMemberPrefix(agent, owner string) string {
	return lengthPrefixed(agent) + ":" + lengthPrefixed(owner) + ":"
}
