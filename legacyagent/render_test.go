package legacyagent

import (
	"testing"
	"time"
)

func TestFormatTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 7, 31, 12, 0, 0, 123456789, time.UTC), "2025-07-31T12:00:00.123456+00:00"},
		{time.Date(2025, 7, 31, 12, 0, 0, 0, time.UTC), "2025-07-31T12:00:00+00:00"},
		{time.Date(2025, 7, 31, 12, 0, 0, 999, time.UTC), "2025-07-31T12:00:00+00:00"},
		{time.Date(2025, 7, 31, 14, 0, 0, 5000, time.FixedZone("CEST", 2*3600)), "2025-07-31T12:00:00.000005+00:00"},
	}
	for _, tt := range tests {
		if got := formatTimestamp(tt.in); got != tt.want {
			t.Errorf("formatTimestamp(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
