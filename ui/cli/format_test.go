package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "-", 42 * time.Second: "42s", 12*time.Minute + 5*time.Second: "12m5s",
		3*time.Hour + 12*time.Minute: "3h12m", 51 * time.Hour: "2d3h",
	} {
		if got := FormatAge(d); got != want {
			t.Errorf("FormatAge(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSelectorFromFlags(t *testing.T) {
	for _, tc := range []struct {
		ids      []string
		all      bool
		filter   string
		allowAll bool
		ok       bool
	}{
		{nil, false, "", true, false},
		{[]string{"a"}, false, "", true, true},
		{nil, true, "", true, true},
		{nil, true, "", false, false},
		{[]string{"a"}, true, "", true, false},
		{[]string{"a"}, false, "true", true, false},
		{nil, false, "true", true, true},
		{nil, false, "true ==", true, false},
	} {
		_, err := selectorFromFlags(tc.ids, tc.all, tc.filter, tc.allowAll)
		if (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc, err)
		}
		if err != nil && !errors.Is(err, replay.ErrBadSelection) && !errors.Is(err, replay.ErrBadFilter) {
			t.Errorf("%+v: %v is not a usage error", tc, err)
		}
	}
}

func TestFormatBody(t *testing.T) {
	if got := FormatBody([]byte(`{"a":[1,2]}`), "application/json", 1024); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n" {
		t.Errorf("json: %q", got)
	}
	if got := FormatBody([]byte("plain text"), "text/plain", 1024); got != "plain text\n" {
		t.Errorf("text: %q", got)
	}
	if got := FormatBody([]byte{0, 0xff, 'A'}, "", 1024); !strings.HasPrefix(got, "00000000  00 ff 41") {
		t.Errorf("binary: %q", got)
	}
	huge := make([]byte, 16<<20)
	got := FormatBody(huge, "", ShowBodyLimit)
	if !strings.Contains(got, "first 65536 of 16777216 bytes shown") || len(got) > 400<<10 {
		t.Errorf("16 MiB body: %d bytes of output, tail %q", len(got), got[len(got)-80:])
	}
}
