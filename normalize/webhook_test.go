package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
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
