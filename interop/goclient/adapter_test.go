package main

import (
	"reflect"
	"testing"

	"github.com/a2agate/gateway/interop/harness"
	"github.com/a2aproject/a2a-go/a2a"
)

func TestNonCanonicalBase64StaysUnequal(t *testing.T) {
	want := part(a2a.FilePart{File: a2a.FileBytes{Bytes: "aGVsbG8="}})
	for _, bytes := range []string{"aGVs\nbG8=", "aGVsbG8", "!!"} {
		got := part(a2a.FilePart{File: a2a.FileBytes{Bytes: bytes}})
		if reflect.DeepEqual(got, want) {
			t.Errorf("bytes %q map like %q: %+v", bytes, "aGVsbG8=", got)
		}
	}
}

// The scenarios compare neutral parts where they compared the SDK's: the
// mapping must come back to what was sent, and keep apart what differs.
func TestPartsRoundTrip(t *testing.T) {
	sent := []harness.Part{
		{Kind: harness.PartText, Text: "echo parts", Metadata: map[string]any{"k": "v"}},
		{Kind: harness.PartData, Data: map[string]any{"city": "Paris", "nested": map[string]any{"nothing": nil}}},
		{Kind: harness.PartRaw, Raw: []byte("hello bytes éè"), MediaType: "text/plain", Filename: "hello.txt"},
		{Kind: harness.PartURL, URL: "https://example.com/r.pdf", MediaType: "application/pdf", Filename: "r.pdf"},
	}
	if got := harness.Map(sdkParts(sent), part); !reflect.DeepEqual(got, sent) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, sent)
	}
}

func TestEventKinds(t *testing.T) {
	status := event(&a2a.TaskStatusUpdateEvent{TaskID: "t1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	if status.Kind != "status:working" || status.TaskID != "t1" || !status.Final {
		t.Errorf("status update %+v", status)
	}
	if e := event(&a2a.TaskArtifactUpdateEvent{TaskID: "t1"}); e.Kind != harness.EventArtifact || e.TaskID != "t1" {
		t.Errorf("artifact update %+v", e)
	}
	if e := event(&a2a.Task{ID: "t1", ContextID: "c1"}); e.Kind != harness.EventTask || e.Task.ID != "t1" || e.TaskID != "t1" {
		t.Errorf("task %+v", e)
	}
}

func TestPushConfigMapsEveryField(t *testing.T) {
	sdk := &a2a.TaskPushConfig{TaskID: "t1", Config: a2a.PushConfig{ID: "c", URL: "u", Token: "k", Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "x"}}}
	want := &harness.PushConfig{TaskID: "t1", ID: "c", URL: "u", Token: "k", Auth: &harness.PushAuth{Schemes: []string{"Bearer"}, Credentials: "x"}}
	if got := pushConfig(sdk); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
