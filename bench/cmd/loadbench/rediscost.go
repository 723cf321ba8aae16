package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCost is what a Redis server did, from INFO: the commands it ran
// (each command a script calls included) and the read events it processed
// (about one per round trip a client makes: a pipeline is read at once). A
// delta of two readings divided by the requests between them is the Redis
// index's cost per request; the server must serve nothing else meanwhile (a
// private redis-server, not a shared one). Its CPU time is left out: under
// callgrind the requests are so slow that Redis's idle housekeeping would
// be most of it (the store's BenchmarkRedisCalls measures it).
type redisCost struct {
	commands, reads int64
}

// readRedisCost reads the server's counters at addr, less the INFO that
// reads them.
func readRedisCost(addr string) (redisCost, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats", "stats").Result()
	if err != nil {
		return redisCost{}, fmt.Errorf("redis INFO: %w", err)
	}
	return parseRedisCost(info)
}

func parseRedisCost(info string) (redisCost, error) {
	var cost redisCost
	for _, line := range strings.Split(info, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(name, "cmdstat_"):
			calls, _, _ := strings.Cut(strings.TrimPrefix(value, "calls="), ",")
			var n int64
			n, err = strconv.ParseInt(calls, 10, 64)
			cost.commands += n
		case name == "total_reads_processed":
			cost.reads, err = strconv.ParseInt(value, 10, 64)
		}
		if err != nil {
			return redisCost{}, fmt.Errorf("redis INFO line %q: %w", line, err)
		}
	}
	return cost, nil
}

// since is the cost from before to c, less the one INFO command and the
// one read of the later reading.
func (c redisCost) since(before redisCost) redisCost {
	return redisCost{commands: c.commands - before.commands - 1, reads: c.reads - before.reads - 1}
}
