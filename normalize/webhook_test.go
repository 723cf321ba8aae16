package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/internal/testrace"
)

// TestWebhookGolden runs testdata/webhook: x.in.json is a delivery as a
// backend of either dialect posts it, x.prev.json (optional) the 1.0 task
// the relay saw before it; x.v10.json is what a 1.0 caller receives,
// x.v03.json what a 0.x caller receives, x.snap.json the task as it now
// stands; x.err holds a substring of the error for a delivery refused.
func TestWebhookGolden(t *testing.T) {
	ins := testfiles.Glob(t, "testdata", "webhook", "*.in.json")
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".in.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			body := goldenFile(t, in)
			canon, info, err := WebhookCanonical(body)
			if wantErr, e := os.ReadFile(base + ".err"); e == nil {
				if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(string(wantErr))) {
					t.Fatalf("error %v, want one containing %q", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			prev, _ := os.ReadFile(base + ".prev.json")
			snap, err := FoldWebhook(bytes.TrimSpace(prev), canon, info)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, base+".snap.json", snap)
			for _, to := range []dialect.ID{dialect.V10, dialect.V03} {
				out, err := WebhookFor(to, canon, snap)
				if err != nil {
					t.Fatalf("to %s: %v", to, err)
				}
				name := map[dialect.ID]string{dialect.V10: ".v10.json", dialect.V03: ".v03.json"}[to]
				compareGolden(t, base+name, out)
			}
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		var pretty bytes.Buffer
		if err := json.Compact(&pretty, got); err != nil {
			t.Fatalf("%s: %v: %s", path, err, got)
		}
		pretty.WriteByte('\n')
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := goldenFile(t, path)
	if !jsonEqual(want, got) {
		t.Errorf("%s:\n got %s\nwant %s", path, got, want)
	}
}

// TestFoldArtifactAppendInOneWrite: an artifact update that appends many
// parts joins them to the artifact's in order, with one write of the task
// whatever their number. Before, each part rewrote the whole task: a
// backend's update of a few bytes per part (a 4 MiB delivery holds some
// 300,000) cost the gateway the square of the task's size.
func TestFoldArtifactAppendInOneWrite(t *testing.T) {
	prev := []byte(`{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"0"}]}]}`)
	update := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"artifactUpdate":{"taskId":"t1","contextId":"c1","append":true,"artifact":{"artifactId":"a","parts":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"text":"` + strconv.Itoa(i+1) + `"}`)
		}
		b.WriteString(`]}}}`)
		return []byte(b.String())
	}
	canon, info, err := WebhookCanonical(update(3))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := FoldWebhook(prev, canon, info)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(snap, "artifacts.0.parts.#.text").Raw; got != `["0","1","2","3"]` {
		t.Fatalf("parts after the append: %s", got)
	}
	if empty, _ := FoldWebhook([]byte(`{"id":"t1","artifacts":[{"artifactId":"a","parts":[]}]}`), canon, info); gjson.GetBytes(empty, "artifacts.0.parts.#.text").Raw != `["1","2","3"]` {
		t.Fatalf("parts appended to none: %s", empty)
	}
	if testrace.Enabled {
		return // the race detector allocates
	}
	canon, info, err = WebhookCanonical(update(2000))
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() { _, _ = FoldWebhook(prev, canon, info) }); n > 20 {
		t.Fatalf("appending 2000 parts took %.0f allocations, want the task written once", n)
	}
}

// TestWebhookCanonicalValidates: a delivery that is not valid JSON, or not
// UTF-8, is refused, not read as far as it goes (and a 1.0 one passed on
// as it came, trailing bytes and all).
func TestWebhookCanonicalValidates(t *testing.T) {
	const sound = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	for _, body := range []string{sound + "<html>", sound[:len(sound)-1], strings.Replace(sound, `"c1"`, "\"c\xff\"", 1), strings.Replace(sound, `"TASK_STATE_WORKING"}`, `"TASK_STATE_WORKING"]`, 1)} {
		if out, _, err := WebhookCanonical([]byte(body)); err == nil {
			t.Errorf("%q: read as %s", body, out)
		}
	}
	if _, _, err := WebhookCanonical([]byte(sound)); err != nil {
		t.Errorf("a sound delivery: %v", err)
	}
}
