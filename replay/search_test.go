package replay

import "testing"

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		in   string
		text bool
	}{
		{`error contains "timeout"`, false},
		{`attempts >= 3`, false},
		{`4711`, true}, // a number is no boolean expression
		{`pay-4711`, true},
		{`ledger timeout`, true},
		{`"quoted"`, true},
	} {
		q := ParseQuery(tc.in)
		if (q.Text != "") != tc.text {
			t.Errorf("%q: %+v, want text=%v", tc.in, q, tc.text)
		}
		if _, err := CompileFilter(q.Filter); err != nil {
			t.Errorf("%q: its filter does not compile: %v", tc.in, err)
		}
	}
}

func TestTextQueryQuotesAnyText(t *testing.T) {
	for _, s := range []string{`a"b`, `back\slash`, "tab\there", `it's`, "ünï"} {
		if _, err := CompileFilter(TextQuery(s).Filter); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}
