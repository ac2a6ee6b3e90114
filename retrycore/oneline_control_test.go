package retrycore

import "testing"

// A handler's stderr may colour its output or carry any bytes: the
// x-last-error written from it must not act on the terminal of whoever
// lists the parking lot.
func TestOneLineStripsTerminalControl(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m alert":             "red alert",
		"title\x1b]0;pwned\x07 set":            "title set",
		"tab\there":                            "tab here",
		"bell\a nul\x00 del\x7f c1\u0085 done": "bell nul del c1 done",
		"bad \xff byte":                        "bad \uFFFD byte",
		"café, naïve":                          "café, naïve",
		"first\x1b[2K line\nsecond line":       "first line",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
