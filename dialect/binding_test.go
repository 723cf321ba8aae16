package dialect

import (
	"context"
	"testing"
)

func TestBinding(t *testing.T) {
	for _, b := range Bindings {
		got, ok := ParseBinding(b.String())
		if !ok || got != b {
			t.Errorf("ParseBinding(%q) = %v, %v", b.String(), got, ok)
		}
	}
	if _, ok := ParseBinding("JSONRPC"); ok {
		t.Error("ParseBinding accepts a card name")
	}
	ctx := context.Background()
	if BindingOf(ctx) != JSONRPC || CallerDialectOf(ctx) != 0 {
		t.Error("an unmarked context is not a JSON-RPC call of no recorded dialect")
	}
	ctx = WithCallerDialect(WithBinding(ctx, GRPC), V03)
	if BindingOf(ctx) != GRPC || CallerDialectOf(ctx) != V03 {
		t.Errorf("marked context: %v %v", BindingOf(ctx), CallerDialectOf(ctx))
	}
	if n := []string{JSONRPC.CardName(), HTTPJSON.CardName(), GRPC.CardName()}; n[0] != "JSONRPC" || n[1] != "HTTP+JSON" || n[2] != "GRPC" {
		t.Errorf("card names %v", n)
	}
}
