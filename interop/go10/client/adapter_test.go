package main

import (
	"reflect"
	"testing"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

func TestUnknownNamesMapToNoNeutralOne(t *testing.T) {
	if got := state(a2a.TaskStateCompleted); got != harness.StateCompleted {
		t.Errorf("completed maps to %q", got)
	}
	// A 0.3 spelling reaching a 1.0 client is a translation bug: it must
	// not pass for the 1.0 state.
	for _, s := range []a2a.TaskState{"completed", a2a.TaskStateUnspecified} {
		if got := state(s); got == harness.StateCompleted || got == "" {
			t.Errorf("state %q maps to %q", s, got)
		}
	}
	if got := role(a2a.MessageRoleAgent); got != harness.RoleAgent {
		t.Errorf("agent role maps to %q", got)
	}
	for _, r := range []a2a.MessageRole{"agent", a2a.MessageRoleUnspecified} {
		if got := role(r); got == harness.RoleAgent || got == harness.RoleUser {
			t.Errorf("role %q maps to %q", r, got)
		}
	}
}

// The 1.0 scenarios compared part metadata printed, where empty and nil
// are one.
func TestEmptyPartMetadataIsNil(t *testing.T) {
	if got := part(&a2a.Part{Content: a2a.Text("x"), Metadata: map[string]any{}}); got.Metadata != nil {
		t.Fatalf("metadata %#v, want nil", got.Metadata)
	}
}

// The scenarios compare neutral parts where they compared the SDK's: the
// mapping must come back to what was sent, and keep apart what differs.
func TestPartsRoundTrip(t *testing.T) {
	sent := []harness.Part{
		{Kind: harness.PartText, Text: "echo values", Metadata: map[string]any{"k": "v"}},
		{Kind: harness.PartData, Data: []any{float64(1), "two"}},
		{Kind: harness.PartData, Data: "plain string"},
		{Kind: harness.PartRaw, Raw: []byte("hello bytes éè"), MediaType: "text/plain", Filename: "hello.txt"},
		{Kind: harness.PartURL, URL: "https://example.com/r.pdf", MediaType: "application/pdf", Filename: "r.pdf"},
	}
	if got := harness.Map(sdkParts(sent), part); !reflect.DeepEqual(got, sent) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, sent)
	}
}

func TestStatusEventKind(t *testing.T) {
	e := event(&a2a.TaskStatusUpdateEvent{TaskID: "t1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}})
	if e.Kind != "status:"+harness.StateInputRequired || e.TaskID != "t1" {
		t.Fatalf("status update %+v", e)
	}
}

func TestPushConfigMapsEveryField(t *testing.T) {
	sdk := &a2a.PushConfig{Tenant: "n", TaskID: "t1", ID: "c", URL: "u", Token: "k", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "x"}}
	want := &harness.PushConfig{Tenant: "n", TaskID: "t1", ID: "c", URL: "u", Token: "k", Auth: &harness.PushAuth{Schemes: []string{"Bearer"}, Credentials: "x"}}
	if got := pushConfig(sdk); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
