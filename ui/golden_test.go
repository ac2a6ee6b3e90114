package ui

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
)

// goldenStep is a key press and the text that shows it took effect.
type goldenStep struct{ key, wait string }

// goldenScreens are the screens the README shows, reached as a user would.
var goldenScreens = []struct {
	name  string
	queue string
	ready string
	steps []goldenStep
}{
	{name: "queues", ready: "3 × amount"}, // the groups' count is in
	{name: "messages", queue: "demo.error.dlq", ready: "all given back"},
	{name: "filtered", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"/", ""}, {"gateway", ""}, {"enter", "2 of 7 messages"}}},
	{name: "grouped", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"g", "4 groups of 7 messages"}}},
	{name: "message", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"down", ""}, {"enter", "Properties"}}},
	{name: "replay", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"r", "reaches demo.main.queue"}}},
	{name: "bulk", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"space", ""}, {"space", "2 selected"}, {"R", "2 × →"}}},
	{name: "search", ready: "3 × amount", steps: []goldenStep{{"/", "search every parking lot:"}, {"amount", ""}, {"enter", "looked at"}}},
	{name: "help", queue: "demo.error.dlq", ready: "all given back", steps: []goldenStep{{"?", "Keys"}}},
}

// TestGoldenScreens runs the real program (teatest) on the fake backend
// at 80×24 and 120×40 and compares each screen, colour stripped, with
// testdata/TestGoldenScreens/*.golden (refresh with -update).
func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range goldenScreens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				fb := newFakeBackend(t.TempDir())
				seedDemo(fb)
				m := New(context.Background(), fb, Options{
					Queue: sc.queue, Renderer: asciiRenderer(), Now: func() time.Time { return testNow },
					ExportDir: "/tmp/exports", Refresh: -1,
				})
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
				waitOutput(t, tm, sc.ready)
				for _, st := range sc.steps {
					if k := keyMsg(st.key); len(st.key) > 1 && k.Type == tea.KeyRunes {
						tm.Type(st.key)
					} else {
						tm.Send(k)
					}
					if st.wait != "" {
						waitOutput(t, tm, st.wait)
					}
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
				golden.RequireEqual(t, []byte(ansi.Strip(fm.View())))
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func waitOutput(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}
