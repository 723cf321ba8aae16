package normalize

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// TrimHistory makes a task's history mean what the caller asked for,
// whatever the backend did with historyLength: at most n most recent
// messages, and no history member at all for n == 0 (1.0 §3.2.4). result is
// a send result or a task in dialect d; it is returned unchanged when it
// already complies.
func TrimHistory(op dialect.Op, d dialect.ID, result []byte, n int) ([]byte, error) {
	path := "history"
	if op == dialect.SendMessage && d == dialect.V10 {
		path = "task.history"
	}
	h := jsonscan.Parse(result)
	if path != "history" {
		h = jsonscan.Member(h, "task")
	}
	if h = jsonscan.Member(h, "history"); !h.IsArray() {
		return result, nil
	}
	if n == 0 {
		return sjson.DeleteBytes(result, path)
	}
	count := 0
	jsonscan.Each(h, func(_, _ gjson.Result) bool { count++; return true })
	if count <= n {
		return result, nil
	}
	kept := make([]byte, 0, len(h.Raw))
	kept = append(kept, '[')
	i := 0
	jsonscan.Each(h, func(_, v gjson.Result) bool {
		if i >= count-n {
			if len(kept) > 1 {
				kept = append(kept, ',')
			}
			kept = append(kept, v.Raw...)
		}
		i++
		return true
	})
	kept = append(kept, ']')
	return sjson.SetRawBytes(result, path, kept)
}
