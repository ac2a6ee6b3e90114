// Command ledger is the exec handler of the conservation tests
// (retrycore/conservation_test.go, retrycore/chaos_daemon_test.go).
//
//	ledger LEDGER_FILE [HOLD_FILE]
//	ledger --plan < IDS       (prints "<id> <fate> <done-at attempt>" per id)
//
// Its outcome is a pure function of PARKINGLOT_MESSAGE_ID and
// PARKINGLOT_ATTEMPT (see Plan), so the test knows each message's fate in
// advance. A message that is done is appended to LEDGER_FILE as one line,
// "<id> <attempt>\n", in a single O_APPEND write before the exit 0: the
// daemon acks only after the exit, so every ack is preceded by its line
// (at least once). No fsync: the tests kill processes, not the machine, and
// a written line is in the page cache before the handler exits.
//
// While HOLD_FILE exists the handler waits before it decides anything, so a
// test can hold the daemon's work in place (a fault then lands on work that
// is certainly left) without stopping the daemon itself.
package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"time"
)

// Fates of a message, chosen by Plan.
const (
	fatePoison    = "poison"    // exit 65 at once: parked, permanent
	fateExhausted = "exhausted" // exit 1 on every attempt: parked after max_retries
	fateFlaky     = "flaky"     // exit 1 until the attempt Plan names, then done
	fateDone      = "done"      // done at the first attempt
)

// Plan says what happens to a message: ~5 % poison, ~5 % always
// transient, ~25 % transient until attempt 2, 3 or 4, the rest done at
// once — so ~30 % fail transiently on their first attempt. The tests ask
// for the plan with --plan, so it is written down only here.
func Plan(id string) (fate string, doneAt int) {
	h := fnv.New32a()
	_, _ = io.WriteString(h, id)
	v := h.Sum32() % 100
	switch {
	case v < 5:
		return fatePoison, 0
	case v < 10:
		return fateExhausted, 0
	case v < 35:
		return fateFlaky, 2 + int(v%3)
	}
	return fateDone, 1
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--plan" {
		printPlan()
		return
	}
	if len(os.Args) != 2 && len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ledger LEDGER_FILE [HOLD_FILE]")
		os.Exit(2)
	}
	if len(os.Args) == 3 {
		for {
			if _, err := os.Stat(os.Args[2]); os.IsNotExist(err) {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling the test's hold file
		}
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // the body; a real handler would read it
	id := os.Getenv("PARKINGLOT_MESSAGE_ID")
	attempt, err := strconv.Atoi(os.Getenv("PARKINGLOT_ATTEMPT"))
	if id == "" || err != nil {
		fmt.Fprintf(os.Stderr, "ledger: no PARKINGLOT_MESSAGE_ID or PARKINGLOT_ATTEMPT (%q)\n", os.Getenv("PARKINGLOT_ATTEMPT"))
		os.Exit(1)
	}
	fate, doneAt := Plan(id)
	switch {
	case fate == fatePoison:
		fmt.Fprintf(os.Stderr, "poison %s\n", id)
		os.Exit(65)
	case fate == fateExhausted, fate == fateFlaky && attempt < doneAt:
		fmt.Fprintf(os.Stderr, "transient failure of %s at attempt %d\n", id, attempt)
		os.Exit(1)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ledger: %v\n", err)
		os.Exit(1)
	}
	// One write(2) of a short line to an O_APPEND file: lines from handlers
	// running at once never interleave.
	if _, err := f.WriteString(id + " " + strconv.Itoa(attempt) + "\n"); err != nil {
		fmt.Fprintf(os.Stderr, "ledger: %v\n", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "ledger: %v\n", err)
		os.Exit(1)
	}
}

// printPlan answers --plan: one line per id read from stdin.
func printPlan() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		fate, doneAt := Plan(in.Text())
		fmt.Fprintf(out, "%s %s %d\n", in.Text(), fate, doneAt)
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "ledger --plan:", err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		os.Exit(1)
	}
}
