package format

import (
	"bytes"
	"testing"
	"time"
)

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "-", -time.Second: "-", 42 * time.Second: "42s", 12*time.Minute + 5*time.Second: "12m5s",
		3*time.Hour + 12*time.Minute: "3h12m", 51 * time.Hour: "2d3h",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTimeAgo(t *testing.T) {
	now := time.Date(2026, 12, 2, 16, 11, 27, 0, time.UTC)
	if got := TimeAgo(now.Add(-8*time.Second), now); got != "2026-12-02T16:11:19Z (8s ago)" {
		t.Errorf("TimeAgo = %q", got)
	}
	if got := TimeAgo(time.Time{}, now); got != "-" {
		t.Errorf("zero: %q", got)
	}
}

// One body is one kind wherever it is shown: the CLI's show and the TUI
// both ask ClassifyBody.
func TestClassifyBody(t *testing.T) {
	ctl := append(bytes.Repeat([]byte("a"), 97), 1, 2) // 2 % control characters
	for _, tc := range []struct {
		name string
		body []byte
		ct   string
		lim  int
		want BodyKind
	}{
		{"empty", nil, "", 0, BodyEmpty},
		{"object", []byte(`{"a":1}`), "", 0, BodyJSON},
		{"number with a JSON type", []byte(`42`), "application/json", 0, BodyJSON},
		{"number without", []byte(`42`), "text/plain", 0, BodyText},
		{"invalid JSON with a JSON type", []byte(`{"a":`), "application/json", 0, BodyText},
		{"JSON cut by the limit", []byte(`{"a":"bcdef"}`), "application/json", 5, BodyText},
		{"text", []byte("hello\tworld\n"), "", 0, BodyText},
		{"escape", []byte("red \x1b[31m"), "", 0, BodyBinary},
		{"NUL", []byte("a\x00b"), "", 0, BodyBinary},
		{"2 % control characters", ctl, "", 0, BodyBinary},
		{"invalid UTF-8", []byte{0xff, 0xfe, 'a'}, "", 0, BodyBinary},
		{"a rune cut by the limit", []byte("aé"), "", 2, BodyText},
	} {
		if got, _ := ClassifyBody(tc.body, tc.ct, tc.lim); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestCutAndOneLine(t *testing.T) {
	if got := Cut("abcdef", 4); got != "abc…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut("abc", 4); got != "abc" {
		t.Errorf("Cut short = %q", got)
	}
	if got := OneLine("a\n  b\x1b[31m\tc"); got != "a b c" { // StripControl drops the whole escape sequence
		t.Errorf("OneLine = %q", got)
	}
}

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		w    int
		want string
	}{
		{nil, 5, ""},
		{[]int64{3, 3, 3}, 5, "▁▁▁"},
		{[]int64{0, 7, 14}, 5, "▁▄█"},
		{[]int64{9, 0, 1, 2}, 3, "▁▄█"}, // the last width values
	} {
		if got := Sparkline(tc.in, tc.w); got != tc.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}
