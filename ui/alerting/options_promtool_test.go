//go:build integration

package alerting_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/ui/alerting"
)

// TestPromtoolOneNewErrorInSixteenParkingLotsIsOneAlert: one failing
// dependency parks the same new error in 16 parking lots of vhost "/",
// watched by two watches (w1 and w2 both watch p00.dlq), and in one of
// vhost b. That is one alert per vhost, not 17 (nor 18), after its for:
// (2m here), counting each parking lot's messages once; it names the
// parking lots, the largest first, and opens the largest.
func TestPromtoolOneNewErrorInSixteenParkingLotsIsOneAlert(t *testing.T) {
	var b strings.Builder
	b.WriteString("rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n")
	lot := func(vhost, queue, instance string, n int) {
		l := fmt.Sprintf(`vhost="%s",queue="%s",job="parkinglot",instance="%s"`, vhost, queue, instance)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_parked_messages{%s}', values: '%dx6'}\n", l, n)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_watch_last_scan_timestamp_seconds{%s}', values: '0+60x6'}\n", l)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_parked_messages_by_error{%s,error_group=\"ledger down <n>\"}', values: '_ _ %dx4'}\n", l, n)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_error_group_oldest_parked_timestamp_seconds{%s,error_group=\"ledger down <n>\"}', values: '_ _ 100x4'}\n", l)
	}
	var lots []string
	for i := range 16 {
		lot("/", fmt.Sprintf("p%02d.dlq", i), "w1", i+1)
		lots = append([]string{fmt.Sprintf("p%02d.dlq", i)}, lots...)
	}
	lot("/", "p00.dlq", "w2", 1)
	lot("b", "it''s b", "w2", 1)
	for _, w := range []string{"w1", "w2"} {
		fmt.Fprintf(&b, "      - {series: 'up{job=\"parkinglot\",instance=\"%s\"}', values: '1x6'}\n", w)
	}
	fmt.Fprintf(&b, `    alert_rule_test:
      - {eval_time: 2m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - {eval_time: 3m, alertname: ParkingLotNewErrorGroup, exp_alerts: []}
      - eval_time: 4m
        alertname: ParkingLotNewErrorGroup
        exp_alerts:
          - exp_labels: {severity: warning, vhost: /, error_group: "ledger down <n>"}
            exp_annotations:
              summary: "New error in /: ledger down <n>"
              queues: "%s"
              command: "parkinglot --vhost / tui p15.dlq"
              description: "136 message(s) parked with an error new there in the last 5m: ledger down <n>. Parking lots: %s. parkinglot --vhost / tui p15.dlq"
          - exp_labels: {severity: warning, vhost: b, error_group: "ledger down <n>"}
            exp_annotations:
              summary: "New error in b: ledger down <n>"
              queues: "it's b"
              command: "parkinglot --vhost b tui 'it'\\''s b'"
              description: "1 message(s) parked with an error new there in the last 5m: ledger down <n>. Parking lots: it's b. parkinglot --vhost b tui 'it'\\''s b'"
`, strings.Join(lots, ", "), strings.Join(lots, ", "))
	o := shortOptions()
	o.NewGroupFor = 2 * time.Minute
	promtoolTestWith(t, o, b.String(), "summary", "queues", "command", "description")
}

// TestPromtoolThresholdsSeverityLabelsAndRunbook: a queue given its own
// threshold is "not empty" above it, the others above 0 (a name with a
// quote matched exactly); the severity, the extra labels and the runbook
// are on the alert; the numbers of the summaries are whole (delta's
// extrapolation over a 5m30s window makes 5.5 of a growth of 5).
func TestPromtoolThresholdsSeverityLabelsAndRunbook(t *testing.T) {
	o := shortOptions()
	o.Thresholds = map[string]int{"noisy.dlq": 5, `say "hi"`: 1}
	o.Severity[alerting.AlertNotEmpty] = "critical"
	o.Labels = map[string]string{"team": "payments", "service": "ledger"}
	o.RunbookURL = "https://runbooks.example/parkinglot"
	o.GrowingWindow = 5*time.Minute + 30*time.Second
	const (
		runbook = `runbook_url: "https://runbooks.example/parkinglot"`
		labels  = `severity: critical, team: payments, service: ledger, job: parkinglot, instance: w, vhost: /`
	)
	tests := `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - {series: 'parkinglot_parked_messages{vhost="/",queue="noisy.dlq",job="parkinglot",instance="w"}', values: '3 3 3 6 6 6 6 6 6'}
      - {series: 'parkinglot_parked_messages{vhost="/",queue="quiet.dlq",job="parkinglot",instance="w"}', values: '0 1 1 1 1 1 1 1 1'}
      - {series: 'parkinglot_parked_messages{vhost="/",queue="say \"hi\"",job="parkinglot",instance="w"}', values: '1 1 1 1 1 1 2 2 2'}
      - {series: 'parkinglot_parked_messages{vhost="/",queue="grows.dlq",job="parkinglot",instance="w"}', values: '0+1x8'}
    alert_rule_test:
      - eval_time: 4m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - exp_labels: {` + labels + `, queue: grows.dlq}
            exp_annotations: {summary: "Parking lot / grows.dlq holds 4 message(s)", ` + runbook + `}
          - exp_labels: {` + labels + `, queue: noisy.dlq}
            exp_annotations: {summary: "Parking lot / noisy.dlq holds 6 message(s)", ` + runbook + `}
          - exp_labels: {` + labels + `, queue: quiet.dlq}
            exp_annotations: {summary: "Parking lot / quiet.dlq holds 1 message(s)", ` + runbook + `}
      - eval_time: 7m
        alertname: ParkingLotGrowing
        exp_alerts:
          - exp_labels: {severity: warning, team: payments, service: ledger, job: parkinglot, instance: w, vhost: /, queue: grows.dlq}
            exp_annotations: {summary: "Parking lot / grows.dlq grew by about 6 in 5m30s", ` + runbook + `}
      - eval_time: 8m
        alertname: ParkingLotNotEmpty
        exp_alerts:
          - exp_labels: {` + labels + `, queue: grows.dlq}
            exp_annotations: {summary: "Parking lot / grows.dlq holds 8 message(s)", ` + runbook + `}
          - exp_labels: {` + labels + `, queue: noisy.dlq}
            exp_annotations: {summary: "Parking lot / noisy.dlq holds 6 message(s)", ` + runbook + `}
          - exp_labels: {` + labels + `, queue: quiet.dlq}
            exp_annotations: {summary: "Parking lot / quiet.dlq holds 1 message(s)", ` + runbook + `}
          - exp_labels: {` + labels + `, queue: 'say "hi"'}
            exp_annotations: {summary: "Parking lot / say \"hi\" holds 2 message(s)", ` + runbook + `}
`
	promtoolTestWith(t, o, tests, "summary", "runbook_url")
}

// TestPromtoolADeliveryLimitOnAParkingLotHoldingMessages: a parking lot
// holding messages under a finite delivery limit warns after --limit-for
// and names the command that lifts it; an unlimited one, or an empty one,
// does not.
func TestPromtoolADeliveryLimitOnAParkingLotHoldingMessages(t *testing.T) {
	var b strings.Builder
	b.WriteString("rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n")
	for _, l := range []struct {
		queue         string
		limit, parked int
	}{{"at-risk.dlq", 20, 3}, {"unlimited.dlq", -1, 5}, {"empty.dlq", 20, 0}} {
		labels := fmt.Sprintf(`vhost="/",queue="%s",job="parkinglot",instance="w1"`, l.queue)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_delivery_limit{%s}', values: '%dx6'}\n", labels, l.limit)
		fmt.Fprintf(&b, "      - {series: 'parkinglot_parked_messages{%s}', values: '%dx6'}\n", labels, l.parked)
	}
	b.WriteString(`      - {series: 'up{job="parkinglot",instance="w1"}', values: '1x6'}
    alert_rule_test:
      - {eval_time: 1m, alertname: ParkingLotDeliveryLimit, exp_alerts: []}
      - eval_time: 3m
        alertname: ParkingLotDeliveryLimit
        exp_alerts:
          - exp_labels: {severity: warning, job: parkinglot, instance: w1, vhost: /, queue: at-risk.dlq}
            exp_annotations:
              summary: "Parking lot / at-risk.dlq has a delivery limit of 20: a lost connection can drop its messages"
              command: "parkinglot --vhost / protect at-risk.dlq"
`)
	o := shortOptions()
	o.LimitFor = 2 * time.Minute
	promtoolTestWith(t, o, b.String(), "summary", "command")
}

// TestPromtoolAnAgeFromFirstSightIsALowerBound: where no message tells
// when it was parked (parkinglot_oldest_parked_age_lower_bound 1), the
// old-message alert says the age is at least what it quotes and why; an
// age the messages tell is quoted as it is.
func TestPromtoolAnAgeFromFirstSightIsALowerBound(t *testing.T) {
	const tests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - {series: 'parkinglot_parked_messages{vhost="/",queue="told.dlq",job="parkinglot",instance="w"}', values: '1x9'}
      - {series: 'parkinglot_parked_messages{vhost="/",queue="seen.dlq",job="parkinglot",instance="w"}', values: '1x9'}
      - {series: 'parkinglot_oldest_parked_age_seconds{vhost="/",queue="told.dlq",job="parkinglot",instance="w"}', values: '0+60x9'}
      - {series: 'parkinglot_oldest_parked_age_seconds{vhost="/",queue="seen.dlq",job="parkinglot",instance="w"}', values: '0+60x9'}
      - {series: 'parkinglot_oldest_parked_age_lower_bound{vhost="/",queue="told.dlq",job="parkinglot",instance="w"}', values: '0x9'}
      - {series: 'parkinglot_oldest_parked_age_lower_bound{vhost="/",queue="seen.dlq",job="parkinglot",instance="w"}', values: '1x9'}
      - {series: 'up{job="parkinglot",instance="w"}', values: '1x9'}
      - {series: 'parkinglot_watch_ready{job="parkinglot",instance="w"}', values: '1x9'}
    alert_rule_test:
      - eval_time: 8m
        alertname: ParkingLotOldMessage
        exp_alerts:
          - exp_labels: {severity: warning, vhost: /, queue: seen.dlq, job: parkinglot, instance: w}
            exp_annotations:
              summary: "The oldest message in / seen.dlq was parked at least 8m 0s ago"
              description: "Parked longer than 5m: replay or remove it. No message in it tells when it was parked: the age runs from when the watch first saw it. Top error: (none known: not scanned yet, or the watch is silent). parkinglot --vhost / tui seen.dlq"
          - exp_labels: {severity: warning, vhost: /, queue: told.dlq, job: parkinglot, instance: w}
            exp_annotations:
              summary: "The oldest message in / told.dlq was parked 8m 0s ago"
              description: "Parked longer than 5m: replay or remove it. Top error: (none known: not scanned yet, or the watch is silent). parkinglot --vhost / tui told.dlq"
`
	promtoolTestWith(t, shortOptions(), tests, "summary", "description")
}
