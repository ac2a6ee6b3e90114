package format

import "testing"

func TestDashboardCells(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{TopGroup("ledger down <n>", 30, 60), "30 × ledger down <n>"},
		{TopGroup("ledger\ndown  <n>", 2, 10), "2 × ledge…"},
		{TopGroup("", 0, 60), "-"},
		{Known(37, true), "37"},
		{Known(0, true), "0"},
		{Known(0, false), "-"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
