package replay

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestScanRunCountsOneRunsEntries: the audit log's entries of one run are
// counted (done and not done), with the parking lots it replayed from and
// its first and last times; other runs, edits without a run and a line
// that is not JSON are passed over.
func TestScanRunCountsOneRunsEntries(t *testing.T) {
	log := strings.Join([]string{
		`{"time":"2026-12-05T10:02:00Z","action":"replay","from_queue":"pay.dlq","message_id":"a","replay_id":"1","run":"R1","result":"ok"}`,
		`{"time":"2026-12-05T10:02:01Z","action":"replay","from_queue":"pay.dlq","message_id":"b","replay_id":"2","run":"R2","result":"ok"}`,
		`not json "run":"R1"`,
		`{"time":"2026-12-05T10:02:03Z","action":"replay","from_queue":"pay.dlq","message_id":"c","replay_id":"3","run":"R1","result":"unroutable"}`,
		`{"time":"2026-12-05T10:02:04Z","action":"edit","from_queue":"x.dlq","message_id":"d","replay_id":"4","result":"ok"}`,
		`{"time":"2026-12-05T10:02:05Z","action":"replay","from_queue":"other.dlq","message_id":"e","replay_id":"5","run":"R1","result":"ok"}`,
	}, "\n") // no newline at the end: the last line counts too
	st := RunStatus{Run: "R1"}
	if err := scanRun(strings.NewReader(log), &st, "audit.jsonl"); err != nil {
		t.Fatal(err)
	}
	if st.Replayed != 2 || st.NotDone != 1 || strings.Join(st.From, ",") != "pay.dlq,other.dlq" {
		t.Errorf("replayed %d, not done %d, from %v: want 2, 1, pay.dlq and other.dlq", st.Replayed, st.NotDone, st.From)
	}
	if want := time.Date(2026, 12, 5, 10, 2, 0, 0, time.UTC); !st.First.Equal(want) || !st.Last.Equal(want.Add(5*time.Second)) {
		t.Errorf("first %v last %v", st.First, st.Last)
	}
	st = RunStatus{Run: "R9"}
	if err := scanRun(strings.NewReader(log), &st, "audit.jsonl"); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("an unknown run: %v, want ErrRunNotFound", err)
	}
}

// TestScanRunCountsMessagesNotEntries: a message whose removal failed
// (ok, not-removed) and was sent again (ok, same replay id) is one message
// replayed; one left not removed at the end is one not done; two
// messages sharing a message id are two.
func TestScanRunCountsMessagesNotEntries(t *testing.T) {
	log := strings.Join([]string{
		`{"time":"2026-12-05T10:02:00Z","action":"replay","from_queue":"q","message_id":"a","replay_id":"1","run":"R1","result":"ok"}`,
		`{"time":"2026-12-05T10:02:01Z","action":"replay","from_queue":"q","message_id":"a","replay_id":"1","run":"R1","result":"not-removed"}`,
		`{"time":"2026-12-05T10:02:02Z","action":"replay","from_queue":"q","message_id":"a","replay_id":"1","run":"R1","result":"ok"}`,
		`{"time":"2026-12-05T10:02:03Z","action":"replay","from_queue":"q","message_id":"b","replay_id":"2","run":"R1","result":"ok"}`,
		`{"time":"2026-12-05T10:02:04Z","action":"replay","from_queue":"q","message_id":"b","replay_id":"2","run":"R1","result":"not-removed"}`,
		`{"time":"2026-12-05T10:02:05Z","action":"replay","from_queue":"q","message_id":"dup","replay_id":"3","run":"R1","result":"ok"}`,
		`{"time":"2026-12-05T10:02:06Z","action":"replay","from_queue":"q","message_id":"dup","replay_id":"4","run":"R1","result":"ok"}`,
	}, "\n")
	st := RunStatus{Run: "R1"}
	if err := scanRun(strings.NewReader(log), &st, "audit.jsonl"); err != nil {
		t.Fatal(err)
	}
	if st.Replayed != 3 || st.NotDone != 1 {
		t.Errorf("replayed %d, not done %d; want 3 (a, dup twice) and 1 (b)", st.Replayed, st.NotDone)
	}
}

func TestNewRunIDSortsByTime(t *testing.T) {
	a := NewRunID()
	if len(a) != len("20261205T100200Z-3f2a") || a[8] != 'T' || a[15] != 'Z' {
		t.Errorf("run id %q", a)
	}
}
