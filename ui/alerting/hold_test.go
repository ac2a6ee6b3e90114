//go:build integration

package alerting_test

import (
	"fmt"
	"strings"
	"testing"
)

// silentWatchSeries: watch w feeds every alert, is killed at minute 8 (a
// failed scrape: up 0, its series stale) and comes back at 14, not ready
// until its first read at 15 and its first scan at 16. g.dlq holds 3
// messages from the start, its oldest passes 5 minutes at 6, a group new
// from 7 (parked at 6m40s: no longer new from 11m40s) until g.dlq is
// replayed at 19; h.dlq grows by one a minute throughout. Watch v is
// removed from the targets at 3 (up goes too) and never returns.
const silentWatchSeries = `
      - series: 'up{job="parkinglot",instance="w"}'
        values: '1x7 0 0 0 0 0 0 1x7'
      - series: 'parkinglot_watch_ready{job="parkinglot",instance="w"}'
        values: '1x7 stale _ _ _ _ _ 0 1x6'
      - series: 'parkinglot_parked_messages{vhost="/",queue="g.dlq",job="parkinglot",instance="w"}'
        values: '3x7 stale _ _ _ _ _ _ 3 3 3 3 0 0 0'
      - series: 'parkinglot_oldest_parked_age_seconds{vhost="/",queue="g.dlq",job="parkinglot",instance="w"}'
        values: '0+60x7 stale _ _ _ _ _ _ 900+60x3 0 0 0'
      - series: 'parkinglot_parked_messages_by_error{vhost="/",queue="g.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ 3 stale _ _ _ _ _ _ _ 3 3 3 stale _ _'
      - series: 'parkinglot_error_group_oldest_parked_timestamp_seconds{vhost="/",queue="g.dlq",error_group="ledger <n>",job="parkinglot",instance="w"}'
        values: '_ _ _ _ _ _ _ 400 stale _ _ _ _ _ _ _ 400 400 400 stale _ _'
      - series: 'parkinglot_watch_last_scan_timestamp_seconds{vhost="/",queue="g.dlq",job="parkinglot",instance="w"}'
        values: '0+60x7 stale _ _ _ _ _ _ _ 960 960 960 1140 1140 1140'
      - series: 'parkinglot_parked_messages{vhost="/",queue="h.dlq",job="parkinglot",instance="w"}'
        values: '0+1x7 stale _ _ _ _ _ _ 15+1x6'
      - series: 'up{job="parkinglot",instance="v"}'
        values: '1 1 1 stale'
      - series: 'parkinglot_parked_messages{vhost="/",queue="v.dlq",job="parkinglot",instance="v"}'
        values: '2 2 2 stale'
`

// firing is a promtool test that the alert fires with those labels, alone,
// at each minute of at.
func firing(alert, labels string, at ...int) string {
	var b strings.Builder
	for _, m := range at {
		fmt.Fprintf(&b, "      - {eval_time: %dm, alertname: %s, exp_alerts: [{exp_labels: {%s}}]}\n", m, alert, labels)
	}
	return b.String()
}

// activeSince is a promtool test that at minute at, the alert of selector
// has been active since minute since: ALERTS_FOR_STATE holds when an
// alert became active, so one resolved and raised again in between would
// show a later minute.
func activeSince(alert, selector string, since int, at int) string {
	return fmt.Sprintf("      - {eval_time: %dm, expr: 'max(ALERTS_FOR_STATE{alertname=%q,%s})', exp_samples: [{labels: '{}', value: %d}]}\n",
		at, alert, selector, since*60)
}

func minutes(from, to int) []int {
	var m []int
	for i := from; i <= to; i++ {
		m = append(m, i)
	}
	return m
}

// TestPromtoolAlertsHoldWhileTheWatchIsSilent: while its watch is down,
// then back but not ready, then ready but with its groups not scanned,
// every parking-lot alert keeps firing on the watch's last values (no
// resolve within the outage), and the same alert goes on when the watch
// returns: active since before the outage, so Alertmanager is sent no
// resolve and no new alert. The watch-down alert fires meanwhile. What
// the returned watch reads then decides: the group no longer new resolves
// at the first scan, a replayed parking lot at once. The alerts of a
// watch gone for good resolve after the hold (10m after its last sample).
func TestPromtoolAlertsHoldWhileTheWatchIsSilent(t *testing.T) {
	const (
		g   = `severity: page, vhost: /, queue: g.dlq, job: parkinglot, instance: w`
		h   = `severity: page, vhost: /, queue: h.dlq, job: parkinglot, instance: w`
		v   = `severity: page, vhost: /, queue: v.dlq, job: parkinglot, instance: v`
		hw  = `severity: warning, vhost: /, queue: h.dlq, job: parkinglot, instance: w`
		gw  = `severity: warning, vhost: /, queue: g.dlq, job: parkinglot, instance: w`
		ng  = `severity: warning, vhost: /, error_group: "ledger <n>"`
		lot = `vhost="/",queue="%s.dlq",job="parkinglot",instance="w"`
	)
	var b strings.Builder
	b.WriteString("rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:")
	b.WriteString(silentWatchSeries)
	b.WriteString("    alert_rule_test:\n")
	for _, m := range minutes(8, 12) {
		fmt.Fprintf(&b, "      - eval_time: %dm\n        alertname: ParkingLotNotEmpty\n        exp_alerts: [{exp_labels: {%s}}, {exp_labels: {%s}}, {exp_labels: {%s}}]\n", m, g, h, v)
	}
	for _, m := range minutes(13, 18) {
		fmt.Fprintf(&b, "      - eval_time: %dm\n        alertname: ParkingLotNotEmpty\n        exp_alerts: [{exp_labels: {%s}}, {exp_labels: {%s}}]\n", m, g, h)
	}
	b.WriteString(firing("ParkingLotNotEmpty", h, 19, 20))
	b.WriteString(firing("ParkingLotGrowing", hw, minutes(6, 21)...))
	b.WriteString(firing("ParkingLotOldMessage", gw, minutes(7, 18)...))
	b.WriteString("      - {eval_time: 19m, alertname: ParkingLotOldMessage, exp_alerts: []}\n")
	b.WriteString(firing("ParkingLotNewErrorGroup", ng, minutes(7, 15)...))
	b.WriteString("      - {eval_time: 16m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}\n")
	b.WriteString("      - {eval_time: 9m, alertname: ParkingLotWatchDown, exp_alerts: []}\n")
	b.WriteString(firing("ParkingLotWatchDown", `severity: page, job: parkinglot, instance: w`, 10, 14))
	b.WriteString("      - {eval_time: 15m, alertname: ParkingLotWatchDown, exp_alerts: []}\n")
	b.WriteString("    promql_expr_test:\n")
	b.WriteString(activeSince("ParkingLotNotEmpty", fmt.Sprintf(lot, "g"), 0, 18))
	b.WriteString(activeSince("ParkingLotNotEmpty", fmt.Sprintf(lot, "h"), 1, 20))
	b.WriteString(activeSince("ParkingLotGrowing", fmt.Sprintf(lot, "h"), 1, 21))
	b.WriteString(activeSince("ParkingLotOldMessage", fmt.Sprintf(lot, "g"), 6, 18))
	b.WriteString(activeSince("ParkingLotNewErrorGroup", `vhost="/",error_group="ledger <n>"`, 7, 15))
	promtoolTest(t, b.String())
}

// TestPromtoolWithoutTheHoldAWatchsDeathIsAnAllClear: the same series
// without the hold (HoldFor 0) resolve every parking-lot alert the minute
// the watch dies and raise them again on its return: what the test above
// shows does not happen.
func TestPromtoolWithoutTheHoldAWatchsDeathIsAnAllClear(t *testing.T) {
	o := shortOptions()
	o.HoldFor = 0
	var b strings.Builder
	b.WriteString("rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:")
	b.WriteString(silentWatchSeries)
	b.WriteString("    alert_rule_test:\n")
	for _, a := range []string{"ParkingLotNotEmpty", "ParkingLotOldMessage", "ParkingLotNewErrorGroup"} {
		fmt.Fprintf(&b, "      - {eval_time: 8m, alertname: %s, exp_alerts: []}\n", a)
	}
	b.WriteString("    promql_expr_test:\n")
	b.WriteString(activeSince("ParkingLotNotEmpty", `queue="g.dlq"`, 15, 18))
	promtoolTestWith(t, o, b.String())
}
