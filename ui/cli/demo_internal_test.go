package cli

import (
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/retrycore/demo"
)

// TestDemoWords: the demo engine reports steps; the command line words
// them, a line each, and the TUI's first notice says what an earlier run
// left.
func TestDemoWords(t *testing.T) {
	var b strings.Builder
	p := demoProgress{&b}
	p.Earlier(3)
	p.Published(25, 17)
	p.Filled("demo-payments.error.dlq", 20)
	p.Deleted("queue", "demo-payments.main.queue", 0)
	p.Deleted("exchange", "demo-payments.main", -1)
	want := "the parking lot already holds 3 message(s) from an earlier run (parkinglot demo --clean removes the demo)\n" +
		"published 25 payments (17 will be parked: flaky-forever and poison); running the consumer…\n" +
		"parking lot demo-payments.error.dlq holds 20 message(s); consumer stopped\n" +
		"deleted queue demo-payments.main.queue (0 messages)\n" +
		"deleted exchange demo-payments.main\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	s := demo.Summary{Pipeline: demo.NewPipeline("", ""), Before: 3, After: 20}
	if n := demoNotice(s); !strings.Contains(n, "17 payments parked by this run (3 from earlier runs; `parkinglot demo --clean` starts over)") {
		t.Errorf("notice %q", n)
	}
}
