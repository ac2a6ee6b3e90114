package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// startJob starts a bulk replay of the demo parking lot behind a gate and
// sends it to the background with b.
func startJob(t *testing.T) *harness {
	t.Helper()
	hs := startReplayOnScreen(t, func(fb *fakeBackend) {
		fb.queues = append(fb.queues, QueueRow{QueueInfo: broker.QueueInfo{Name: "other.dlq", Type: "classic"}, ParkingLot: true})
		fb.add("other.dlq", "o-1", "boom", time.Minute, `{}`)
	})
	hs.press("b")
	hs.until("the job in the background", func() bool { return hs.m.dialog == nil && len(hs.m.jobs) == 1 })
	return hs
}

// startReplayOnScreen replays the demo's parking lot in the dialog on
// screen, one message at a time (fb.gate), and returns once one is done.
func startReplayOnScreen(t *testing.T, seed func(*fakeBackend)) *harness {
	t.Helper()
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	if seed != nil {
		seed(fb)
	}
	fb.gate = make(chan struct{})
	hs := newHarness(t, fb, "demo.error.dlq", 120, 30)
	hs.until("loaded", hs.loaded)
	hs.press("R")
	hs.untilScreen("7 × → demo.main")
	hs.press("enter")
	hs.untilScreen("0/7")
	fb.gate <- struct{}{}
	hs.untilScreen("1/7")
	return hs
}

// TestJobRunsWhileBrowsingAnotherQueue: b sends a running replay to the
// background; the status bar follows it; another parking lot opens and
// loads meanwhile; the jobs screen lists it; it ends with its result kept
// until dismissed.
func TestJobRunsWhileBrowsingAnotherQueue(t *testing.T) {
	hs := startJob(t)
	hs.untilScreen("job: replay 1/7")
	hs.press("esc") // to the queues screen
	hs.untilScreen("other.dlq")
	// Open other.dlq (as enter on its row does): the job goes on meanwhile.
	hs.apply(pushMsg{newMessagesScreen(hs.m.c, "other.dlq")})
	hs.until("other.dlq loaded", hs.loaded)
	hs.fb.gate <- struct{}{}
	hs.untilScreen("job: replay 2/7")
	hs.press("J")
	hs.untilScreen("▸ replay demo.error.dlq 2/7")
	for range 5 {
		hs.fb.gate <- struct{}{}
	}
	hs.untilScreen("done: demo.error.dlq: replayed 7")
	if len(hs.m.jobs) != 1 {
		t.Fatal("a finished job is kept until dismissed")
	}
	hs.press("enter") // its result
	hs.until("its dialog in front", func() bool { return hs.m.dialog != nil })
	hs.press("enter") // close: dismissed
	hs.until("dismissed", func() bool { return hs.m.dialog == nil && len(hs.m.jobs) == 0 })
	if n := len(hs.fb.ids("demo.error.dlq")); n != 0 {
		t.Fatalf("%d messages left in demo.error.dlq, want 0", n)
	}
}

// TestSecondJobOnTheSameParkingLotIsRefused: with a job on a parking lot,
// another action there is refused with a clear line, and its list does
// not load (a browse would hold the job's messages).
func TestSecondJobOnTheSameParkingLotIsRefused(t *testing.T) {
	hs := startJob(t)
	hs.press("R")
	hs.untilScreen("one job per parking lot")
	if hs.m.dialog != nil {
		t.Fatal("a second dialog opened on the job's parking lot")
	}
	browses := hs.fb.called("browse demo.error.dlq")
	hs.press("ctrl+r")
	hs.untilScreen("a job is acting on demo.error.dlq")
	if got := hs.fb.called("browse demo.error.dlq"); got != browses {
		t.Fatalf("the job's parking lot was browsed %d time(s) while the job ran", got-browses)
	}
	for range 6 {
		hs.fb.gate <- struct{}{}
	}
	hs.until("the job's end reloads the list", func() bool { return hs.loaded() && hs.messages().data.len() == 0 })
}

// TestQuitWithAJobAsksFirst: q with a job running asks; n stays and the
// job goes on; q then y cancels the job and quits once it stopped, with
// its honest summary.
func TestQuitWithAJobAsksFirst(t *testing.T) {
	hs := startJob(t)
	hs.press("q")
	hs.untilScreen("1 job(s) running — y: quit and stop them")
	if hs.quit {
		t.Fatal("q quit with a job running")
	}
	hs.press("n")
	hs.fb.gate <- struct{}{}
	hs.untilScreen("job: replay 2/7")
	hs.press("q")
	hs.untilScreen("y: quit")
	hs.press("y")
	hs.until("quit once the job stopped", func() bool { return hs.quit })
	sum := strings.Join(hs.m.JobSummaries(), "\n")
	if !strings.Contains(sum, "demo.error.dlq: cancelled: replayed 2") {
		t.Fatalf("summary %q", sum)
	}
	if n := len(hs.fb.ids("demo.error.dlq")); n != 5 {
		t.Fatalf("%d still parked, want 5", n)
	}
}

// TestCtrlCDuringAnActionOnScreenAsksAndTells: ctrl+c while the dialog on
// screen runs a replay asks as for a job; y stops it and quits once it
// stopped, with its outcome told as a job's.
func TestCtrlCDuringAnActionOnScreenAsksAndTells(t *testing.T) {
	hs := startReplayOnScreen(t, nil)
	hs.press("ctrl+c")
	hs.untilScreen("1 job(s) running — y: quit and stop them")
	if hs.quit {
		t.Fatal("ctrl+c quit with an action running on screen")
	}
	hs.press("y")
	hs.until("quit once the action stopped", func() bool { return hs.quit })
	if sum := strings.Join(hs.m.JobSummaries(), "\n"); !strings.Contains(sum, "demo.error.dlq: cancelled: replayed 1") {
		t.Fatalf("summary %q, want the stopped replay's", sum)
	}
	if n := len(hs.fb.ids("demo.error.dlq")); n != 6 {
		t.Fatalf("%d still parked, want 6", n)
	}
}

// TestJobsScreenCancelsAJob: c on the jobs screen cancels the job under
// the cursor; what it did is kept.
func TestJobsScreenCancelsAJob(t *testing.T) {
	hs := startJob(t)
	hs.press("J")
	hs.untilScreen("▸ replay demo.error.dlq 1/7")
	hs.press("c")
	hs.untilScreen("done: demo.error.dlq: cancelled: replayed 1")
	if n := len(hs.fb.ids("demo.error.dlq")); n != 6 {
		t.Fatalf("%d still parked, want 6", n)
	}
}

// TestSearchSkipsAParkingLotAJobActsOn: a search while a job runs reads
// every other parking lot and says the job's was not searched.
func TestSearchSkipsAParkingLotAJobActsOn(t *testing.T) {
	hs := startJob(t)
	hs.press("esc")
	hs.untilScreen("other.dlq")
	hs.press("/")
	hs.untilScreen("search every parking lot:")
	hs.typeText("boom")
	hs.press("enter")
	hs.untilScreen("demo.error.dlq: not searched: another action works on it")
	if s := hs.search(); s == nil || len(s.matches) != 1 || s.matches[0].Queue != "other.dlq" {
		t.Fatalf("matches %+v, want o-1 of other.dlq", s.matches)
	}
	for range 6 {
		hs.fb.gate <- struct{}{}
	}
}
