//go:build integration

package alerting_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/ui/alerting"
)

// ruleTests are promtool unit tests (one minute a sample) in which each
// rule fires and resolves: a.dlq fills at minute 2 and is emptied at 10,
// its oldest message passes 5 minutes at 6, its error group appears at 2
// (new from 5 on, when a.dlq has been watched the window's 5 minutes: at 3
// it is a first look, not news; no longer new at 8, but held while the
// watch is down); b.dlq grows every minute until 9; c.dlq holds a group
// from the start (never new) and a second from 9; the watch is down from 5
// to 8.
const ruleTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'parkinglot_parked_messages{vhost="/",queue="a.dlq",job="parkinglot",instance="w"}'
        values: '0 0 3 3 3 3 3 3 3 3 0 0 0 0 0 0 0 0 0 0'
      - series: 'parkinglot_parked_messages{vhost="/",queue="b.dlq",job="parkinglot",instance="w"}'
        values: '0 1 2 3 4 5 6 7 8 9 9 9 9 9 9 9 9 9 9 9'
      - series: 'parkinglot_oldest_parked_age_seconds{vhost="/",queue="a.dlq",job="parkinglot",instance="w"}'
        values: '0 0 60 120 180 240 360 420 480 540 0 0 0 0 0 0 0 0 0 0'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="a.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '_ _ 3 3 3 3 3 3 3 3 _ _ _ _ _ _ _ _ _ _'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="a.dlq",error_group="other",job="parkinglot",instance="w"}'
        values: '_ _ 1 1 1 1 1 1 1 1 _ _ _ _ _ _ _ _ _ _'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="a.dlq",job="parkinglot",instance="w"}'
        values: '0+60x19'
      - series: 'parkinglot_parked_messages{vhost="/",queue="c.dlq",job="parkinglot",instance="w"}'
        values: '2x19'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="c.dlq",job="parkinglot",instance="w"}'
        values: '0+60x19'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="c.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '2 2 2 2 2 2 2 2 2 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="c.dlq",error_group="timeout after <n>ms",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ _ _ 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'up{job="parkinglot",instance="w"}'
        values: '1 1 1 1 1 0 0 0 0 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'parkinglot_watch_ready{job="parkinglot",instance="w"}'
        values: '1x19'
    alert_rule_test:
      - eval_time: 2m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - {exp_labels: {severity: page, vhost: /, queue: b.dlq, job: parkinglot, instance: w}}
          - {exp_labels: {severity: page, vhost: /, queue: c.dlq, job: parkinglot, instance: w}}
      - eval_time: 5m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - {exp_labels: {severity: page, vhost: /, queue: a.dlq, job: parkinglot, instance: w}}
          - {exp_labels: {severity: page, vhost: /, queue: b.dlq, job: parkinglot, instance: w}}
          - {exp_labels: {severity: page, vhost: /, queue: c.dlq, job: parkinglot, instance: w}}
      - eval_time: 12m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - {exp_labels: {severity: page, vhost: /, queue: b.dlq, job: parkinglot, instance: w}}
          - {exp_labels: {severity: page, vhost: /, queue: c.dlq, job: parkinglot, instance: w}}
      - {eval_time: 4m, alertname: ParkingLotGrowing, exp_alerts: []}
      - {eval_time: 8m, alertname: ParkingLotGrowing, exp_alerts: [{exp_labels: {severity: warning, vhost: /, queue: b.dlq, job: parkinglot, instance: w}}]}
      - {eval_time: 16m, alertname: ParkingLotGrowing, exp_alerts: []}
      - {eval_time: 6m, alertname: ParkingLotOldMessage, exp_alerts: []}
      - {eval_time: 8m, alertname: ParkingLotOldMessage, exp_alerts: [{exp_labels: {severity: warning, vhost: /, queue: a.dlq, job: parkinglot, instance: w}}]}
      - {eval_time: 11m, alertname: ParkingLotOldMessage, exp_alerts: []}
      - {eval_time: 1m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 3m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 5m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "ledger <n>"}}]}
      - {eval_time: 8m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "ledger <n>"}}]}
      - {eval_time: 9m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "timeout after <n>ms"}}]}
      - {eval_time: 10m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "timeout after <n>ms"}}]}
      - {eval_time: 15m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 6m, alertname: ParkingLotWatchDown, exp_alerts: []}
      - {eval_time: 8m, alertname: ParkingLotWatchDown, exp_alerts: [{exp_labels: {severity: page, job: parkinglot, instance: w}}]}
      - {eval_time: 10m, alertname: ParkingLotWatchDown, exp_alerts: []}
`

// TestPromtoolChecksAndTestsTheRules: promtool accepts the printed rules,
// annotation templates included, and in its unit tests every rule fires
// and resolves on series shaped like the watch's.
func TestPromtoolChecksAndTestsTheRules(t *testing.T) {
	promtool := tool(t, "PARKINGLOT_PROMTOOL", "/usr/bin/promtool")
	dir := t.TempDir()
	full, err := alerting.Rules(alerting.Defaults()).YAML()
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "full.yml", string(full))
	if out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "full.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	promtoolTest(t, ruleTests)
}

// restartTests: the watch restarts at minute 5 (a failed scrape, so every
// series of it is stale) and exports the depths at once from 6; d.dlq is
// empty, and e.dlq holds the same two groups before and after, counted
// again at 8 (its scan of 7 failed). Nothing is new at 11 and 12, when the window (5m) looks back
// at the depths without their groups. A group the scan of 13 finds in
// e.dlq is new at once; one that appears in the empty d.dlq at 14 too (a
// parking lot empty a window ago needs no scan).
const restartTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'parkinglot_parked_messages{vhost="/",queue="d.dlq",job="parkinglot",instance="w"}'
        values: '0 0 0 0 0 stale 0 0 0 0 0 0 0 0 1 1 1 1 1 1'
      - series: 'parkinglot_parked_messages{vhost="/",queue="e.dlq",job="parkinglot",instance="w"}'
        values: '4 4 4 4 4 stale 4 4 4 4 4 4 4 5 5 5 5 5 5 5'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="d.dlq",job="parkinglot",instance="w"}'
        values: '0 60 120 180 240 stale 360 420 480 540 600 660 720 780 840 840 840 840 840 840'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="e.dlq",job="parkinglot",instance="w"}'
        values: '0 0 0 0 0 stale _ _ 480 480 480 480 480 780 780 780 780 780 780 780'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="e.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '3 3 3 3 3 stale _ _ 3 3 3 3 3 3 3 3 3 3 3 3'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="e.dlq",error_group="timeout after <n>ms",job="parkinglot",instance="w"}'
        values: '1 1 1 1 1 stale _ _ 1 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="e.dlq",error_group="tls handshake",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ _ _ _ _ _ _ 1 1 1 1 1 1 1'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="d.dlq",error_group="schema <n>",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ _ _ _ _ _ _ _ 1 1 1 1 1 1'
      - series: 'up{job="parkinglot",instance="w"}'
        values: '1 1 1 1 1 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1'
    alert_rule_test:
      - {eval_time: 8m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 9m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 11m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 12m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - eval_time: 13m
        alertname: ParkingLotNewErrorGroup
        exp_alerts:
          - {exp_labels: {severity: warning, vhost: /, error_group: "tls handshake"}}
      - eval_time: 14m
        alertname: ParkingLotNewErrorGroup
        exp_alerts:
          - {exp_labels: {severity: warning, vhost: /, error_group: "schema <n>"}}
          - {exp_labels: {severity: warning, vhost: /, error_group: "tls handshake"}}
`

// TestPromtoolNoNewErrorGroupsAfterARestart: a restarted watch exports the
// depths at once and the groups only after its first scan; a window later
// the groups it had all along are not news, and a group found after that
// scan still is.
func TestPromtoolNoNewErrorGroupsAfterARestart(t *testing.T) {
	promtoolTest(t, restartTests)
}

// groupAgeTests: the watch exports each group's oldest parked time. In
// f.dlq "ledger <n>" was parked an hour before minute 0, "schema <n>" half
// an hour before, counted in "other" until it grows into the top groups at
// 7 (not new: its messages are old), and "tls handshake" first parked at
// 7m50s, counted from 8 (new until 12m50s). The watch restarts at 10 (every
// series stale) and exports all three again from 11: only "tls handshake"
// is new then, still in its window.
const groupAgeTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'parkinglot_parked_messages{vhost="/",queue="f.dlq",job="parkinglot",instance="w"}'
        values: '4 4 4 4 4 4 4 4 5 5 stale 5 5 5 5 5'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="f.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '3 3 3 3 3 3 3 3 3 3 stale 3 3 3 3 3'
      - series: 'parkinglot_error_group_oldest_parked_timestamp_seconds{vhost="/",queue="f.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '-3600 -3600 -3600 -3600 -3600 -3600 -3600 -3600 -3600 -3600 stale -3600 -3600 -3600 -3600 -3600'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="f.dlq",error_group="other",job="parkinglot",instance="w"}'
        values: '1 1 1 1 1 1 1 _ _ _ _ _ _ _ _ _'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="f.dlq",error_group="schema <n>",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ 1 1 1 stale 1 1 1 1 1'
      - series: 'parkinglot_error_group_oldest_parked_timestamp_seconds{vhost="/",queue="f.dlq",error_group="schema <n>",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ -1800 -1800 -1800 stale -1800 -1800 -1800 -1800 -1800'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="f.dlq",error_group="tls handshake",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ _ 1 1 stale 1 1 1 1 1'
      - series: 'parkinglot_error_group_oldest_parked_timestamp_seconds{vhost="/",queue="f.dlq",error_group="tls handshake",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ _ 470 470 stale 470 470 470 470 470'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="f.dlq",job="parkinglot",instance="w"}'
        values: '0 60 120 180 240 300 360 420 480 540 stale 660 720 780 840 900'
      - series: 'up{job="parkinglot",instance="w"}'
        values: '1 1 1 1 1 1 1 1 1 1 0 1 1 1 1 1'
    alert_rule_test:
      - {eval_time: 6m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 7m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 8m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "tls handshake"}}]}
      - {eval_time: 11m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "tls handshake"}}]}
      - {eval_time: 12m, alertname: ParkingLotNewErrorGroup, exp_alerts: [{exp_labels: {severity: warning, vhost: /, error_group: "tls handshake"}}]}
      - {eval_time: 13m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
`

// TestPromtoolNewErrorGroupFromTheMessagesParkedTimes: where the watch
// exports a group's oldest parked time, a group is new while that time is
// within the window, so a group grown out of "other" and the groups a
// restarted watch exports again are not news, and a new one is.
func TestPromtoolNewErrorGroupFromTheMessagesParkedTimes(t *testing.T) {
	promtoolTest(t, groupAgeTests)
}

// commandTests: three parking lots whose names a shell would read in
// three ways. The command each alert carries, expanded by Prometheus's own
// templates, names the vhost and queue as one shell word each.
const commandTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'parkinglot_parked_messages{vhost="/",queue="orders.dlq",job="parkinglot",instance="w"}'
        values: '1x3'
      - series: 'parkinglot_parked_messages{vhost="team a",queue="pay $HOME; rm",job="parkinglot",instance="w"}'
        values: '1x3'
      - series: 'parkinglot_parked_messages{vhost="ops",queue="it''s parked",job="parkinglot",instance="w"}'
        values: '1x3'
    alert_rule_test:
      - eval_time: 2m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - exp_labels: {severity: page, vhost: /, queue: orders.dlq, job: parkinglot, instance: w}
            exp_annotations: {command: "parkinglot --vhost / tui orders.dlq"}
          - exp_labels: {severity: page, vhost: team a, queue: "pay $HOME; rm", job: parkinglot, instance: w}
            exp_annotations: {command: "parkinglot --vhost 'team a' tui 'pay $HOME; rm'"}
          - exp_labels: {severity: page, vhost: ops, queue: "it's parked", job: parkinglot, instance: w}
            exp_annotations: {command: "parkinglot --vhost ops tui 'it'\\''s parked'"}
`

// TestPromtoolCommandQuotesWhatAShellWouldRead: the alerts' command is
// pasted into a shell; a vhost or queue with a space, a $ or a quote is
// still one word each, and a plain name is left as it is. The expanded
// commands are those promtool expects; a shell given them reads back the
// names.
func TestPromtoolCommandQuotesWhatAShellWouldRead(t *testing.T) {
	promtoolTest(t, commandTests, "command")
	for _, c := range []struct{ line, vhost, queue string }{
		{"parkinglot --vhost / tui orders.dlq", "/", "orders.dlq"},
		{"parkinglot --vhost 'team a' tui 'pay $HOME; rm'", "team a", "pay $HOME; rm"},
		{`parkinglot --vhost ops tui 'it'\''s parked'`, "ops", "it's parked"},
	} {
		out, err := exec.Command("sh", "-c", "printf '%s\\n' "+c.line).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", c.line, err)
		}
		if want := "parkinglot\n--vhost\n" + c.vhost + "\ntui\n" + c.queue + "\n"; string(out) != want {
			t.Errorf("a shell reads %q as %q, want %q", c.line, out, want)
		}
	}
}

// promtoolTest runs promtool's unit tests over the rules with short
// windows (shortOptions). The annotations are left out but those named in
// keep (promtool compares them whole, and their query of the top error
// group is exercised by the end-to-end test).
func promtoolTest(t *testing.T, tests string, keep ...string) {
	t.Helper()
	promtoolTestWith(t, shortOptions(), tests, keep...)
}

// shortOptions fit a test of minutes; a new group is news at once, as
// the tests of newness want (the for: has its own).
func shortOptions() alerting.Options {
	o := alerting.Defaults()
	o.NotEmptyFor, o.GrowingWindow, o.OldestThreshold, o.OldestFor, o.NewGroupWindow, o.NewGroupFor, o.WatchDownFor, o.HoldFor =
		time.Minute, 5*time.Minute, 5*time.Minute, time.Minute, 5*time.Minute, 0, 2*time.Minute, 10*time.Minute
	return o
}

func promtoolTestWith(t *testing.T, o alerting.Options, tests string, keep ...string) {
	t.Helper()
	promtool := tool(t, "PARKINGLOT_PROMTOOL", "/usr/bin/promtool")
	dir := t.TempDir()
	f := alerting.Rules(o)
	for i, r := range f.Groups[0].Rules {
		kept := map[string]string{}
		for _, k := range keep {
			if v, ok := r.Annotations[k]; ok {
				kept[k] = v
			}
		}
		f.Groups[0].Rules[i].Annotations = kept
	}
	b, err := f.YAML()
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "rules.yml", string(b))
	write(t, dir, "tests.yml", tests)
	cmd := exec.Command(promtool, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
