package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/replay"
)

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
	if got := FormatBody(body.Decode(body.Input{Body: []byte(`{"a":[1,2]}`), ContentType: "application/json"}), "application/json", 1024); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n" {
		t.Errorf("json: %q", got)
	}
	if got := FormatBody(body.Decode(body.Input{Body: []byte("plain text"), ContentType: "text/plain"}), "text/plain", 1024); got != "plain text\n" {
		t.Errorf("text: %q", got)
	}
	if got := FormatBody(body.Decode(body.Input{Body: []byte{0, 0xff, 'A'}}), "", 1024); !strings.HasPrefix(got, "00000000  00 ff 41") {
		t.Errorf("binary: %q", got)
	}
	huge := make([]byte, 16<<20)
	got := FormatBody(body.Decode(body.Input{Body: huge}), "", ShowBodyLimit)
	if !strings.Contains(got, "first 65536 of 16777216 bytes shown") || len(got) > 400<<10 {
		t.Errorf("16 MiB body: %d bytes of output, tail %q", len(got), got[len(got)-80:])
	}
}

// A plan of PlanEach keeps only the first refusals and ids not found: the
// text plan lists up to maxItems of each kind and counts the rest of all
// of them, not only of those kept.
func TestWritePlanListsUpToMaxItemsAndCountsTheRest(t *testing.T) {
	p := replay.Plan{Queue: "orders.dlq", Chosen: 5,
		Items:   []replay.PlanItem{{ID: "a", Source: "x-death"}, {ID: "b", Source: "x-death"}, {ID: "c", Source: "x-death"}},
		Refused: []replay.Failure{{ID: "r1", Err: "no origin"}}, RefusedCount: 4,
		Missing: []string{"m1", "m2", "m3"}, MissingCount: 300}
	var b strings.Builder
	if err := WritePlan(&b, p, 2); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"5 message(s) in orders.dlq to replay, 4 refused\n",
		"  a → ", "  b → ", "  … and 3 more\n",
		"  refused r1: no origin\n", "  … and 3 more refused\n",
		"  not found: m1\n", "  not found: m2\n", "  … and 298 more not found\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "  c → ") || strings.Contains(got, "m3") {
		t.Errorf("plan lists more than 2 of a kind:\n%s", got)
	}
}
