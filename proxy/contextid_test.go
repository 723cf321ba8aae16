package proxy

import (
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// TestContextIDRefusal pins what the README's security section documents:
// a contextId another caller holds is refused, which tells the caller that
// the id is in use and nothing more. The refusal is the same text for a
// client-chosen and a server-minted context, names no task, owner or
// content, and an id no one holds is free to take.
func TestContextIDRefusal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backendKind) {
		g := newAuthGateway(t, b)
		alice, bob := g.as(token(t, "alice")), g.as(token(t, "bob"))
		for _, c := range callers {
			withContext := func(msgID, ctxID string) string {
				// Message ids per dialect: one seen before is answered as a retry.
				return strings.Replace(c.send(c.d.String()+msgID, c.text("hello"), ""), `"messageId"`, `"contextId":"`+ctxID+`","messageId"`, 1)
			}
			chosen := "alice-chosen-" + c.d.String()
			task := c.task(t, mustResult(t, alice.call("1", c.method(dialect.SendMessage), withContext("a1", chosen))))
			if task.Get("contextId").Str != chosen {
				t.Fatalf("the client-chosen context was not kept: %s", task.Raw)
			}
			minted := c.task(t, mustResult(t, alice.call("2", c.method(dialect.SendMessage), c.send(c.d.String()+"a2", c.text("hi"), "")))).Get("contextId").Str
			var refusals []string
			for _, ctxID := range []string{chosen, minted} {
				e := wantError(t, bob.call("3", c.method(dialect.SendMessage), withContext("b1", ctxID)), c.d, -32602)
				msg := e.Get("message").Str
				for _, secret := range []string{ctxID, task.Get("id").Str, "alice", "hello"} {
					if strings.Contains(e.Raw, secret) {
						t.Fatalf("the refusal tells more than that the context is taken (%q): %s", secret, e.Raw)
					}
				}
				refusals = append(refusals, e.Raw)
				if !strings.Contains(msg, "start a new context") {
					t.Fatalf("the refusal must say what to do: %s", msg)
				}
			}
			if refusals[0] != refusals[1] {
				t.Fatalf("a chosen and a minted context are refused differently:\n%s\n%s", refusals[0], refusals[1])
			}
			// Alice keeps her context; an id no one holds is Bob's to take.
			mustResult(t, alice.call("4", c.method(dialect.SendMessage), withContext("a3", chosen)))
			free := c.task(t, mustResult(t, bob.call("5", c.method(dialect.SendMessage), withContext("b2", "bob-chosen-"+c.d.String()))))
			if free.Get("contextId").Str != "bob-chosen-"+c.d.String() {
				t.Fatalf("bob's own context: %s", free.Raw)
			}
		}
	})
}
