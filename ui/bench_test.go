package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// benchModel is the root model on a messages screen holding n summaries,
// as after a browse of an n-message parking lot.
func benchModel(b *testing.B, n int) *Model {
	b.Helper()
	fb := newFakeBackend(b.TempDir())
	m := New(context.Background(), fb, Options{Queue: "big.dlq", Renderer: asciiRenderer(), Now: func() time.Time { return testNow }, Refresh: -1})
	b.Cleanup(func() { _ = m.Close() })
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	s := m.top().(*messagesScreen)
	origin := &retrycore.Origin{Destination: retrycore.Destination{Exchange: "main.exchange", RoutingKey: "payment.execute"}, Source: "x-original-exchange"}
	batch := make([]replay.Summary, 0, n)
	for i := 0; i < n; i++ {
		errText := fmt.Sprintf("transfer %d not found in ledger shard %d (request %08x)", i, i%7, i*2654435761)
		batch = append(batch, replay.Summary{
			Index: i, ID: fmt.Sprintf("msg-%07d", i), Exchange: "error.exchange", RoutingKey: "payment.error",
			Facts:  retrycore.Facts{Attempts: int64(i % 4), Error: errText},
			Origin: origin, Group: retrycore.GroupKey(errText), ParkedAt: testNow.Add(-time.Duration(i) * time.Second),
		})
	}
	s.data.add(batch)
	s.loaded = true
	s.rebuild()
	return m
}

// BenchmarkMessageListKeyPress is one frame of scrolling a 100,000-row
// message list: Update with a key press, then View. The target is well
// under 16 ms (60 frames a second).
func BenchmarkMessageListKeyPress(b *testing.B) {
	m := benchModel(b, 100_000)
	down := tea.KeyMsg{Type: tea.KeyDown}
	up := tea.KeyMsg{Type: tea.KeyUp}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := down
		if i/1000%2 == 1 {
			k = up // scroll back and forth through the first thousand rows
		}
		m.Update(k)
		_ = m.View()
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/frame")
	if per > 16*time.Millisecond {
		b.Errorf("a key press takes %s per frame with 100,000 rows; the target is < 16ms", per)
	}
}

// BenchmarkMessageListFilterKeystroke is one keystroke of "/" filtering
// over 100,000 rows (the whole list is searched on every keystroke).
func BenchmarkMessageListFilterKeystroke(b *testing.B) {
	m := benchModel(b, 100_000)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'/'}})
	keys := []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune{'4'}}, {Type: tea.KeyBackspace}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(keys[i%2])
		_ = m.View()
	}
}

// BenchmarkTUIKeyPressFrame is `make bench`'s TUI figure: each op is 2,000
// frames of Update (a key press, scrolling down then back up) and View
// over a 100,000-row message list, so even -benchtime 1x measures a
// steady state. It prints the figures line with the time per frame
// against the 16 ms budget of 60 frames a second (ratio = used / budget,
// so below 1.00 meets it).
func BenchmarkTUIKeyPressFrame(b *testing.B) {
	const rows, frames = 100_000, 2_000
	m := benchModel(b, rows)
	down := tea.KeyMsg{Type: tea.KeyDown}
	up := tea.KeyMsg{Type: tea.KeyUp}
	var worst time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for f := 0; f < frames; f++ {
			k := down
			if f >= frames/2 {
				k = up
			}
			start := time.Now()
			m.Update(k)
			_ = m.View()
			worst = max(worst, time.Since(start))
		}
	}
	b.StopTimer()
	per := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N*frames)
	b.ReportMetric(per, "ms/frame")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst_ms/frame")
	brokertest.BenchLine(b, fmt.Sprintf("tui-keypress-frame-vs-16ms-budget(%d rows)", rows), b.N*frames, per, 16, "ms/frame")
	fmt.Printf("  (tui: worst frame %.2f ms)\n", float64(worst.Microseconds())/1000)
	if per > 16 {
		b.Errorf("a key press takes %.2f ms per frame with %d rows; the budget is 16 ms", per, rows)
	}
}
