package main

import (
	"strings"
	"testing"
)

func TestCallgrindSummary(t *testing.T) {
	dump := "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfl=(1) x.go\nfn=(1) main\n16 3\nsummary: 72304924\ntotals: 72304924\n"
	got, err := callgrindSummary(strings.NewReader(dump))
	if err != nil || got != 72304924 {
		t.Fatalf("got %d, %v", got, err)
	}
	if _, err := callgrindSummary(strings.NewReader("events: Ir\ntotals: 5\n")); err == nil {
		t.Fatal("a dump without a summary line was read")
	}
	if _, err := callgrindSummary(strings.NewReader("summary: lots\n")); err == nil {
		t.Fatal("a summary that is not a number was read")
	}
}

func TestInstrTable(t *testing.T) {
	var b strings.Builder
	writeInstrTable(&b, []instrRow{
		{Case: "Go httputil.ReverseProxy", Kind: kindPlain, PerRequest: 200000},
		{Case: "nginx", Kind: kindPlain, PerRequest: 25000},
		{Case: "gateway 1.0→1.0", Kind: kindGateway, PerRequest: 250000},
		{Case: "gateway 0.3→1.0 +JWT +Redis index", Kind: kindGateway, Skipped: "skipped: no Redis"},
	}, 2000)
	out := b.String()
	for _, want := range []string{
		"| case | instructions/request | ratio to Go httputil.ReverseProxy | ratio to nginx |",
		"| gateway 1.0→1.0 | 250000 | 0.80x | 0.10x |",
		"| gateway 0.3→1.0 +JWT +Redis index | skipped: no Redis | | |",
		"2000 sends",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
