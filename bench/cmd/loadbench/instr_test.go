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

func TestParseRedisCost(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=50,usec_per_call=4.17,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_zadd:calls=30,usec=9,usec_per_call=0.30,rejected_calls=0,failed_calls=0\r\n\r\n# Stats\r\ntotal_reads_processed:40\r\ntotal_commands_processed:99\r\n"
	got, err := parseRedisCost(info)
	if err != nil || got != (redisCost{commands: 42, reads: 40}) {
		t.Fatalf("parseRedisCost = %+v, %v; want 42 commands, 40 reads", got, err)
	}
	if _, err := parseRedisCost("cmdstat_get:calls=many,usec=1\r\n"); err == nil {
		t.Fatal("a call count that is not a number was read")
	}
	// The later reading's own INFO and read are not the requests'.
	if d := (redisCost{commands: 143, reads: 71}).since(got); d != (redisCost{commands: 100, reads: 30}) {
		t.Fatalf("since = %+v", d)
	}
}

func TestInstrTableRedisFigures(t *testing.T) {
	var b strings.Builder
	writeInstrTable(&b, []instrRow{
		{Case: "gateway 0.3→1.0 +JWT +Redis index", Kind: kindGateway, PerRequest: 600000, n: 2000, redis: &redisCost{commands: 58000, reads: 6000}},
	}, 2000)
	if want := "gateway 0.3→1.0 +JWT +Redis index; Redis: 3.00 reads (round trips), 29.0 commands per request"; !strings.Contains(b.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, b.String())
	}
}
