package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

func startOnLot(t *testing.T, w, h int) *harness {
	t.Helper()
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	hs := newHarness(t, fb, "demo.error.dlq", w, h)
	hs.until("the list to load", hs.loaded)
	return hs
}

func TestNavigation(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	hs := newHarness(t, fb, "", 100, 30)
	hs.untilScreen("demo.error.dlq")
	scr := hs.screen()
	if !strings.Contains(scr, "1 parking lot(s)") {
		t.Fatalf("queues screen does not count the parking lot:\n%s", scr)
	}
	// Parking lots first, marked.
	first := strings.Index(scr, "demo.error.dlq")
	if other := strings.Index(scr, "demo.main.queue"); other < first {
		t.Fatalf("parking lot not listed first:\n%s", scr)
	}
	hs.press("enter")
	hs.until("the list to load", hs.loaded)
	hs.untilScreen("demo.error.dlq: 7 messages") // the status bar's depth
	if !strings.Contains(hs.screen(), "amqp://guest:xxxxx@127.0.0.1:5672/ vhost /") {
		t.Fatalf("status bar lacks the connection:\n%s", hs.screen())
	}
	hs.press("down", "enter")
	hs.until("the body", func() bool { return strings.Contains(hs.fullContent(), "Body") })
	scr = hs.screen()
	for _, want := range []string{"x-last-error", "amount must be positive, got -250", "x-retry-count", "Death history", "demo.retry.3s", "expired", `"amount": -250`} {
		if !strings.Contains(scr+hs.fullContent(), want) {
			t.Errorf("message screen lacks %q:\n%s", want, scr)
		}
	}
	hs.press("esc")
	hs.untilScreen("7 messages")
	hs.press("esc")
	hs.untilScreen("1 parking lot(s)")
	hs.press("q")
	hs.until("q to quit", func() bool { return hs.quit })
}

// fullContent is the message screen's whole viewport content.
func (h *harness) fullContent() string {
	if s, ok := h.m.top().(*messageScreen); ok {
		return s.content()
	}
	return ""
}

func TestFilterAsYouType(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("/")
	hs.typeText("gateway")
	if got := len(hs.messages().rows); got != 2 {
		t.Fatalf("filter gateway: %d rows, want 2", got)
	}
	hs.press("q") // typed, not quit
	if hs.quit || hs.messages().filter.Value() != "gatewayq" {
		t.Fatalf("q while filtering should be typed; filter %q", hs.messages().filter.Value())
	}
	hs.press("backspace", "enter")
	if s := hs.screen(); !strings.Contains(s, "2 of 7 messages") || !strings.Contains(s, "filter: gateway") {
		t.Fatalf("filter not shown:\n%s", s)
	}
	hs.press("esc") // clears the filter
	if got := len(hs.messages().rows); got != 7 {
		t.Fatalf("after esc: %d rows, want 7", got)
	}
	// By id and by origin routing key.
	hs.press("/")
	hs.typeText("PAY-0005")
	if got := len(hs.messages().rows); got != 1 {
		t.Fatalf("filter by id: %d rows", got)
	}
	hs.press("esc", "/")
	hs.typeText("payment.execute")
	if got := len(hs.messages().rows); got != 7 {
		t.Fatalf("filter by origin: %d rows", got)
	}
}

func TestSortCycles(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	m := hs.messages()
	first := func() string { s, _ := m.current(); return s.ID }
	hs.press("s") // age: oldest first
	if first() != "pay-0001" || !strings.Contains(hs.screen(), "sort: age ↑") {
		t.Fatalf("age sort: first %s", first())
	}
	hs.press("S")
	hs.press("home")
	if first() != "pay-0007" {
		t.Fatalf("reversed age sort: first %s", first())
	}
	hs.press("S", "s") // error
	hs.press("home")
	// By error group ("amount must be positive, got <n> …" first), the
	// group's messages in queue order.
	if first() != "pay-0002" {
		t.Fatalf("error sort: first %s", first())
	}
	hs.press("down", "down", "down")
	if s, _ := m.current(); s.ID != "pay-0004" { // "bank gateway timeout …"
		t.Fatalf("error sort: fourth %s", s.ID)
	}
	hs.press("s") // origin: all equal, stable
	hs.press("s") // back to queue order
	hs.press("home")
	if first() != "pay-0001" || !strings.Contains(hs.screen(), "sort: queue order") {
		t.Fatalf("queue order: first %s", first())
	}
}

func TestCursorKeys(t *testing.T) {
	hs := startOnLot(t, 80, 12) // a body of 8 rows: 6 list rows
	m := hs.messages()
	hs.press("G")
	if m.list.cursor != 6 {
		t.Fatalf("G: cursor %d", m.list.cursor)
	}
	hs.press("<")
	if m.list.cursor != 0 {
		t.Fatalf("<: cursor %d", m.list.cursor)
	}
	hs.press("pgdown")
	if m.list.cursor != 5 {
		t.Fatalf("pgdown: cursor %d", m.list.cursor)
	}
	hs.press("k", "k", "j")
	if m.list.cursor != 4 {
		t.Fatalf("k k j: cursor %d", m.list.cursor)
	}
	hs.press("end", "up")
	if m.list.cursor != 5 || !strings.Contains(hs.screen(), "▸ pay-0006") {
		t.Fatalf("end up: cursor %d\n%s", m.list.cursor, hs.screen())
	}
}

func TestGroupByError(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("g")
	m := hs.messages()
	if len(m.groups) != 4 {
		t.Fatalf("%d groups, want 4: %+v", len(m.groups), m.groups)
	}
	if g := m.groups[0]; len(g.Indices) != 3 || !strings.HasPrefix(g.Key, "amount must be positive") {
		t.Fatalf("largest group first: %+v", g)
	}
	if !strings.Contains(hs.screen(), "4 groups of 7 messages") {
		t.Fatalf("grouped info line:\n%s", hs.screen())
	}
	hs.press("enter") // open the group
	if m.grouped || len(m.rows) != 3 {
		t.Fatalf("open group: grouped=%v rows=%d", m.grouped, len(m.rows))
	}
	if !strings.Contains(hs.screen(), "demo.error.dlq › amount must be positive") {
		t.Fatalf("breadcrumb lacks the group:\n%s", hs.screen())
	}
	hs.press("R")
	hs.untilScreen("Replay 3 message(s)")
	if !strings.Contains(hs.screen(), "group “amount must be positive") {
		t.Fatalf("dialog does not name the group:\n%s", hs.screen())
	}
	hs.press("esc")
	hs.until("dialog closed", func() bool { return hs.m.dialog == nil })
	hs.press("esc") // back to the groups
	if !m.grouped || m.list.cursor != 0 {
		t.Fatalf("esc from an opened group: grouped=%v", m.grouped)
	}
	// esc from the groups goes back to the flat list, then leaves.
	hs.press("esc")
	if m.grouped || len(hs.m.stack) != 2 {
		t.Fatalf("esc from the groups: grouped=%v", m.grouped)
	}
	hs.press("g")
	// R on a group row replays the whole group.
	hs.press("down", "R")
	hs.untilScreen("2 × → demo.main")
	hs.press("enter")
	hs.until("replayed", func() bool { return hs.m.dialog == nil && hs.fb.called("replay ") == 1 })
	hs.untilScreen("replayed 2")
	hs.until("reloaded", func() bool { return hs.loaded() && hs.messages().data.len() == 5 })
}

func TestSelection(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("space", "down", "space")
	m := hs.messages()
	if got := selectedIDs(t, m); fmt.Sprint(got) != "[pay-0001 pay-0003]" {
		t.Fatalf("selected %v", got)
	}
	if !strings.Contains(hs.screen(), "2 selected") {
		t.Fatalf("selection not shown:\n%s", hs.screen())
	}
	hs.press("R")
	hs.untilScreen("2 selected message(s)")
	hs.untilScreen("2 × → demo.main / payment.execute → reaches demo.main.queue")
	hs.press("tab") // the rate field of a bulk replay
	hs.typeText("50")
	hs.press("enter")
	hs.until("replayed", func() bool { return hs.m.dialog == nil })
	if hs.fb.called("replay demo.error.dlq 2 rate=50") != 1 {
		t.Fatalf("calls: %v", hs.fb.calls)
	}
	hs.until("reloaded", func() bool { return hs.loaded() && hs.messages().data.len() == 5 })
	if got := selectedIDs(t, m); len(got) != 0 {
		t.Fatalf("replayed messages stay selected: %v", got)
	}
	// ctrl+a selects every message shown; esc clears the selection first.
	hs.press("ctrl+a")
	if m.selected.len() != 5 {
		t.Fatalf("ctrl+a: %d", m.selected.len())
	}
	hs.press("esc")
	if m.selected.len() != 0 || len(hs.m.stack) != 2 {
		t.Fatalf("esc should clear the selection, not leave")
	}
}

// Several runes in one key message (fast typing, a paste, tmux send-keys)
// act as separate presses: "/" opens the filter and the rest is typed.
func TestKeysArrivingTogether(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.apply(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/gateway")})
	if m := hs.messages(); !m.typing || m.filter.Value() != "gateway" || len(m.rows) != 2 {
		t.Fatalf("typing=%v filter=%q rows=%d", m.typing, m.filter.Value(), len(m.rows))
	}
}

// Streaming batches extend the view exactly for the queue order, and
// approximately (rebuilt on doubling) for other orders and the groups;
// the end of the browse makes every view exact.
func TestStreamingGrowsTheView(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	for i := 0; i < 300; i++ {
		fb.add("big.dlq", fmt.Sprintf("m-%03d", i), fmt.Sprintf("error %d in shard %d", i, i%5), time.Duration(i%17)*time.Minute, "{}")
	}
	fb.batch = 7
	for _, mode := range []struct {
		sort    sortMode
		reverse bool
		grouped bool
		filter  string
	}{{sortQueue, false, false, ""}, {sortQueue, false, false, "shard 3"}, {sortAge, false, false, ""}, {sortQueue, true, false, ""}, {sortError, false, true, ""}} {
		c := &common{ctx: context.Background(), backend: fb, styles: NewStyles(asciiRenderer()), keys: DefaultKeyMap(), now: func() time.Time { return testNow }, workers: newWorkers(), width: 100, height: 20}
		m := newMessagesScreen(c, "big.dlq")
		m.sort, m.reverse, m.grouped = mode.sort, mode.reverse, mode.grouped
		m.filter.SetValue(mode.filter)
		f := newFeed(func() {})
		m.feed, m.loading = f, true
		res, err := fb.Browse(context.Background(), BrowseRequest{Queue: "big.dlq", OnBatch: func(b []replay.Summary) {
			m.Update(feedBatchMsg{f: f, batch: b})
		}})
		if err != nil {
			t.Fatal(err)
		}
		m.Update(browseDoneMsg{f: f, res: res})
		got := append([]int32(nil), m.rows...)
		gotGroups := len(m.groups)
		m.rebuild()
		if fmt.Sprint(got) != fmt.Sprint(m.rows) || gotGroups != len(m.groups) {
			t.Errorf("%+v: streamed view differs from a full rebuild", mode)
		}
	}
}

// "/=EXPR" browses again with a broker-side filter; esc removes it.
func TestExprFilter(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("/")
	hs.typeText("=id starts pay-0001")
	if got := len(hs.messages().rows); got != 7 {
		t.Fatalf("an expr is not a local filter: %d rows while typing", got)
	}
	hs.press("enter")
	hs.until("the filtered browse", func() bool { return hs.fb.called("filter id starts pay-0001") == 1 && hs.loaded() })
	hs.untilScreen("expr: id starts pay-0001")
	if got := len(hs.messages().rows); got != 1 {
		t.Fatalf("expr: %d rows, want 1", got)
	}
	hs.press("esc")
	hs.until("the full browse", func() bool { return hs.fb.called("browse") == 3 && hs.loaded() })
	if strings.Contains(hs.screen(), "expr:") || len(hs.messages().rows) != 7 {
		t.Fatalf("expr not removed:\n%s", hs.screen())
	}
}

// selectedIDs are the ids of the selected messages, in queue order.
func selectedIDs(t *testing.T, m *messagesScreen) []string {
	t.Helper()
	var ids []string
	for _, i := range m.selected.indices() {
		id, err := m.data.id(i)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestAStatusLineOvertakenByANewerOneIsDropped: commands run concurrently,
// so a status line decided earlier (a cancelled dialog's) can arrive after
// a newer one (the replay that followed); the newer one stays.
func TestAStatusLineOvertakenByANewerOneIsDropped(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	older := status(statusWarn, "cancelled — nothing changed")
	newer := status(statusOK, "replayed 2")
	hs.apply(newer())
	hs.apply(older())
	if hs.m.status != "replayed 2" {
		t.Fatalf("status %q, want the newer line", hs.m.status)
	}
	hs.apply(status(statusInfo, "later")())
	if hs.m.status != "later" {
		t.Fatalf("status %q, want a line decided later", hs.m.status)
	}
}

// esc from a queue opened by name (`parkinglot tui QUEUE`, the demo) or
// from the list puts the queues screen's cursor on that queue, not on
// whichever row was first.
func TestBackLandsOnTheQueueLeft(t *testing.T) {
	for _, queue := range []string{"demo.retry.3s", "demo.error.dlq", ""} {
		t.Run(queue, func(t *testing.T) {
			fb := newFakeBackend(t.TempDir())
			seedDemo(fb)
			hs := newHarness(t, fb, queue, 100, 30)
			want := queue
			if queue == "" { // opened from the queues screen
				want = "demo.retry.1s"
				hs.untilScreen("demo.retry.1s")
				hs.press("down", "down", "enter")
			}
			hs.until("the list", hs.loaded)
			hs.press("esc")
			hs.untilScreen("1 parking lot(s)")
			q, ok := hs.m.top().(*queuesScreen)
			if !ok {
				t.Fatalf("esc did not go back to the queues")
			}
			if got := q.selectedName(); got != want {
				t.Fatalf("the cursor is on %q, want %q", got, want)
			}
			if !strings.Contains(hs.screen(), "▸   "+want) && !strings.Contains(hs.screen(), "▸P  "+want) {
				t.Fatalf("the cursor mark is not on %s:\n%s", want, hs.screen())
			}
		})
	}
}
