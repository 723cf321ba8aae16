package normalize

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

// The translators walk a request's params and a reply's result with the
// spans recorded while the whole body was validated (ParseRequestTo,
// ParseReplyTo), at the value's offset in that body; on their own they
// scan the value for its spans. Both walks must read every document alike.

func TestSpannedWalksAgreeOnGoldenFiles(t *testing.T) {
	t.Parallel()
	for _, dir := range goldenDirs {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no files in testdata/%s", dir)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if dir == "request" {
				checkSpannedRequest(t, p, b)
			} else {
				checkSpannedReply(t, p, b)
			}
		}
	}
}

// FuzzSpannedWalks holds the spanned walks to the scanning ones on any
// input, as a request's params and as a reply's result.
func FuzzSpannedWalks(f *testing.F) {
	for _, dir := range goldenDirs {
		files, _ := seedFiles(f, dir)
		for _, p := range files {
			f.Add(readSeed(f, p))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Valid(b) {
			return
		}
		checkSpannedReply(t, "fuzz", b)
		for _, method := range []string{"message/send", "SendMessage", "tasks/get", "CreateTaskPushNotificationConfig"} {
			checkSpannedRequest(t, "fuzz", []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, b)))
		}
	})
}

func checkSpannedRequest(t *testing.T, name string, body []byte) {
	t.Helper()
	plain, errPlain := ParseRequest(body)
	spanned, errSpanned := ParseRequestTo(new([]int), body)
	if !sameError(errPlain, errSpanned) {
		t.Fatalf("%s: ParseRequest: %v; ParseRequestTo: %v", name, errPlain, errSpanned)
	}
	if errPlain != nil {
		return
	}
	for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
		want, wantInfo, wantErr := ParamsTo(nil, plain.Op, plain.Dialect, to, plain.Params)
		got, gotInfo, gotErr := spanned.ParamsTo(nil, to)
		if !bytes.Equal(got, want) || !reflect.DeepEqual(gotInfo, wantInfo) || !sameError(gotErr, wantErr) {
			t.Fatalf("%s to %s: spanned walk gives %s %+v %v; scanning gives %s %+v %v", name, to, got, gotInfo, gotErr, want, wantInfo, wantErr)
		}
	}
}

func checkSpannedReply(t *testing.T, name string, result []byte) {
	t.Helper()
	body := append(append([]byte(`{"jsonrpc":"2.0","id":"r-1", "result" : `), result...), " }"...)
	plain, errPlain := ParseReply(body)
	spanned, errSpanned := ParseReplyTo(new([]int), body)
	if !sameError(errPlain, errSpanned) {
		t.Fatalf("%s: ParseReply: %v; ParseReplyTo: %v", name, errPlain, errSpanned)
	}
	if errPlain != nil {
		return
	}
	for _, from := range []dialect.ID{dialect.V03, dialect.V10} {
		for _, to := range []dialect.ID{dialect.V03, dialect.V10} {
			for _, op := range dialect.Ops {
				want, wantInfo, wantErr := ResultInfoTo(nil, op, from, to, plain.Result)
				got, gotInfo, gotErr := spanned.ResultInfoTo(nil, op, from, to)
				if !bytes.Equal(got, want) || !reflect.DeepEqual(gotInfo, wantInfo) || !sameError(gotErr, wantErr) {
					t.Fatalf("%s: %s result %s to %s: spanned walk gives %s %+v %v; scanning gives %s %+v %v", name, op, from, to, got, gotInfo, gotErr, want, wantInfo, wantErr)
				}
			}
			want, wantInfo, wantErr := EventInfoTo(nil, from, to, plain.Result)
			got, gotInfo, gotErr := spanned.EventInfoTo(nil, from, to)
			if !bytes.Equal(got, want) || !reflect.DeepEqual(gotInfo, wantInfo) || !sameError(gotErr, wantErr) {
				t.Fatalf("%s: event %s to %s with its info: spanned walk gives %s %+v %v; scanning gives %s %+v %v", name, from, to, got, gotInfo, gotErr, want, wantInfo, wantErr)
			}
			for _, final := range []bool{false, true} {
				want, wantErr := EventTo(nil, from, to, plain.Result, final)
				got, gotErr := spanned.EventTo(nil, from, to, final)
				if !bytes.Equal(got, want) || !sameError(gotErr, wantErr) {
					t.Fatalf("%s: event %s to %s (final %v): spanned walk gives %s %v; scanning gives %s %v", name, from, to, final, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
