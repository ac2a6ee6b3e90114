package ui

import "testing"

// TestFitCount: counts fit their columns at any size (a million-message
// group showed "10000…").
func TestFitCount(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		width int
		want  string
	}{
		{7, 3, "7"}, {999, 3, "999"}, {1000, 3, "1k"}, {45678, 3, "45k"}, {456789, 3, "99+"},
		{999999, 6, "999999"}, {1000000, 6, "1000k"}, {10000000, 6, "10000k"}, {123456789, 6, "123M"},
		{5, 1, "5"}, {12, 1, "+"},
	} {
		got := fitCount(tc.n, tc.width)
		if got != tc.want {
			t.Errorf("fitCount(%d, %d) = %q, want %q", tc.n, tc.width, got, tc.want)
		}
		if len(got) > tc.width {
			t.Errorf("fitCount(%d, %d) = %q is wider than %d", tc.n, tc.width, got, tc.width)
		}
	}
}
