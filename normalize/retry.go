package normalize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// AppendSendDigest identifies what a send asks for, for retries: the hex
// sha256 of its params in 1.0 form, without the message id's value and
// without the configuration's members that shape the answer and not the
// work (blocking, returnImmediately, historyLength). Parts, every other id
// (context, task, references), metadata, accepted output modes and push
// config count. The params are not re-serialised with sorted members: that
// cost 10% of a send's CPU through the gateway, and a retry is its client
// sending the same message again. scratch is room for what is hashed,
// returned for reuse.
func AppendSendDigest(scratch, v10 []byte) (digest string, room []byte, err error) {
	root := jsonscan.Parse(v10)
	if !root.IsObject() {
		return "", scratch, errors.New("send params are not an object")
	}
	id := root.Get("message.messageId")
	cfg := root.Get("configuration")
	type span struct {
		at, n int
		cfg   bool // the configuration object, rewritten; else cut
	}
	var spans [2]span
	n := 0
	if id.Index > 0 {
		spans[n] = span{at: id.Index, n: len(id.Raw)}
		n++
	}
	if cfg.Index > 0 && cfg.IsObject() {
		spans[n] = span{at: cfg.Index, n: len(cfg.Raw), cfg: true}
		n++
	}
	if n == 2 && spans[1].at < spans[0].at {
		spans[0], spans[1] = spans[1], spans[0]
	}
	kept, at := scratch[:0], 0
	for _, sp := range spans[:n] {
		if sp.at < at || sp.at+sp.n > len(v10) {
			return "", scratch, errors.New("send params: overlapping members")
		}
		kept = append(kept, v10[at:sp.at]...)
		at = sp.at + sp.n
		if sp.cfg {
			kept = appendWorkConfig(kept, cfg)
		}
	}
	kept = append(kept, v10[at:]...)
	sum := sha256.Sum256(kept)
	return hex.EncodeToString(sum[:]), kept, nil
}

// appendWorkConfig appends a send's configuration without the members that
// shape its answer only.
func appendWorkConfig(dst []byte, cfg gjson.Result) []byte {
	dst = append(dst, '{')
	first := true
	jsonscan.Each(cfg, func(k, v gjson.Result) bool {
		switch k.Str {
		case "blocking", "returnImmediately", "historyLength":
			return true
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(append(dst, k.Raw...), ':'), v.Raw...)
		return true
	})
	return append(dst, '}')
}

// GetTaskParams are the params of a GetTask call for id, the same in both
// dialects.
func GetTaskParams(id string) []byte {
	quoted, _ := json.Marshal(id) // a string always marshals
	return append(append(append(make([]byte, 0, len(quoted)+8), `{"id":`...), quoted...), '}')
}

// SendResultOfTask wraps a task (a GetTask result in dialect d) as a send's
// result: 1.0 names the task member, 0.x answers the task itself. The
// result is a copy.
func SendResultOfTask(d dialect.ID, task []byte) []byte {
	if d != dialect.V10 {
		return slices.Clone(task)
	}
	return append(append(append(make([]byte, 0, len(task)+9), `{"task":`...), task...), '}')
}
