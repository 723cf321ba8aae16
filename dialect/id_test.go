package dialect

import "testing"

// TestVersions: every configurable version but auto names a wire dialect,
// and the two dialects have labels of their own.
func TestVersions(t *testing.T) {
	want := map[Version]ID{VersionAuto: 0, Version025: V03, Version03: V03, Version10: V10}
	if len(Versions) != len(want) {
		t.Errorf("Versions = %q", Versions)
	}
	for _, v := range Versions {
		if got, ok := want[v]; !ok || v.ID() != got {
			t.Errorf("Version(%q).ID() = %s, want %s", v, v.ID(), got)
		}
	}
	if V03.String() == V10.String() || ID(0).String() != "unknown" {
		t.Errorf("dialect labels %q, %q, %q", V03, V10, ID(0))
	}
	if ExtensionsHeader(V03) == ExtensionsHeader(V10) {
		t.Error("both dialects name the same extensions header")
	}
}

// TestSupportedVersionHeader: the versions the gateway speaks, patch
// numbers ignored, and no other.
func TestSupportedVersionHeader(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "0.2": true, "0.2.5": true, "0.3": true, "0.3.0": true, "1.0": true, "1.0.7": true,
		"0.1": false, "1.1": false, "2.0": false, "1": false, "0": false, "1.": false, ".0": false, "v1.0": false, "abc": false,
	} {
		if got := SupportedVersionHeader(v); got != want {
			t.Errorf("SupportedVersionHeader(%q) = %v, want %v", v, got, want)
		}
	}
}
