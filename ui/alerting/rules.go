// Package alerting writes the Prometheus alerting rules that ship with
// parkinglot: rules over what `parkinglot watch` exports (replay/watch's
// metric names), with annotations an on-call engineer can act on — the
// queue, its top error group and the command that opens it.
package alerting

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/parkinglot/parkinglot/replay/watch"
)

// Options are the thresholds and durations of the rules; Defaults holds
// what a team would start with.
type Options struct {
	Job             string        // the Prometheus job that scrapes the watch
	NotEmptyFor     time.Duration // a parking lot holding messages this long pages
	GrowingWindow   time.Duration // growth is measured over this window
	OldestThreshold time.Duration // the oldest message older than this
	OldestFor       time.Duration
	LimitFor        time.Duration // a lot holding messages under a finite delivery limit this long
	NewGroupWindow  time.Duration // a group absent this long ago is new
	NewGroupFor     time.Duration // a new group still there this long is news
	WatchDownFor    time.Duration
	// HoldFor is how long a firing parking-lot alert holds on the last
	// values of a watch (or daemon) that is down, not ready or gone: a
	// watch's death is no all-clear, and its return no new page. 0: no
	// hold.
	HoldFor time.Duration
	// Thresholds: a queue named here is "not empty" above this many
	// messages, not above 0 (a parking lot where a few are normal).
	Thresholds map[string]int
	Severity   map[string]string // each alert's severity label
	Labels     map[string]string // more labels on every alert (team, service)
	RunbookURL string            // the runbook_url annotation of every alert, when set
}

// Defaults: page when a parking lot has held messages for 2 minutes (the
// "> 0 pages someone" of a parking lot that is watched), warn when it
// grew over 15 minutes, when its oldest message is over an hour old, when
// an error group appeared within the hour and is still there 5 minutes
// later; page when the watch has been down or not ready for a minute (the
// alerts it fed are frozen meanwhile: someone must know), and hold a firing
// alert up to an hour on the last values of a silent watch.
func Defaults() Options {
	return Options{
		Job:             "parkinglot",
		NotEmptyFor:     2 * time.Minute,
		GrowingWindow:   15 * time.Minute,
		OldestThreshold: time.Hour,
		OldestFor:       5 * time.Minute,
		LimitFor:        5 * time.Minute,
		NewGroupWindow:  time.Hour,
		NewGroupFor:     5 * time.Minute,
		WatchDownFor:    time.Minute,
		HoldFor:         time.Hour,
		Severity: map[string]string{
			AlertNotEmpty: "page", AlertGrowing: "warning", AlertOldMessage: "warning",
			AlertNewErrorGroup: "warning", AlertWatchDown: "page", AlertDeliveryLimit: "warning",
		},
	}
}

// File is a Prometheus rules file.
type File struct {
	Groups []Group `yaml:"groups"`
}

// Group is one rule group.
type Group struct {
	Name  string `yaml:"name"`
	Rules []Rule `yaml:"rules"`
}

// Rule is one alerting rule.
type Rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// The alert names: the contract a team routes on.
const (
	AlertNotEmpty      = "ParkingLotNotEmpty"
	AlertGrowing       = "ParkingLotGrowing"
	AlertOldMessage    = "ParkingLotOldMessage"
	AlertNewErrorGroup = "ParkingLotNewErrorGroup"
	AlertWatchDown     = "ParkingLotWatchDown"
	AlertDeliveryLimit = "ParkingLotDeliveryLimit"
)

// Alerts are the alert names, in the file's order.
var Alerts = []string{AlertNotEmpty, AlertGrowing, AlertOldMessage, AlertNewErrorGroup, AlertWatchDown, AlertDeliveryLimit}

// ruleLabels are the labels the rules set or take from the watch's series:
// one given again would change what an alert is, or which it is.
var ruleLabels = []string{"alertname", "alertstate", "severity", "job", "instance", "vhost", "queue", "error_group"}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// CheckLabel says why name=value cannot be one of Options.Labels, or nil.
func CheckLabel(name, value string) error {
	switch {
	case !labelName.MatchString(name):
		return fmt.Errorf("label name %q: Prometheus takes letters, digits and _, not starting with a digit", name)
	case strings.HasPrefix(name, "__"):
		return fmt.Errorf("label name %q: names starting with __ are Prometheus's own", name)
	case slices.Contains(ruleLabels, name):
		return fmt.Errorf("label %q is the rules' own", name)
	case !utf8.ValidString(value):
		return fmt.Errorf("label %s: the value is not UTF-8", name)
	}
	return nil
}

// CheckSeverity says why level cannot be a severity, or nil.
func CheckSeverity(level string) error {
	if level == "" || !utf8.ValidString(level) {
		return errors.New("a severity is a non-empty UTF-8 label value")
	}
	return nil
}

// topError is an annotation template that asks Prometheus for the
// parking lot's largest error group when the alert fires.
var topError = `{{ with printf "topk(1, ` + watch.MetricByError + `{vhost=%q,queue=%q})" $labels.vhost $labels.queue | query }}{{ . | first | label "error_group" }}{{ else }}(none known: not scanned yet, or the watch is silent){{ end }}`

const where = `{{ $labels.vhost }} {{ $labels.queue }}`

// lowerBound asks Prometheus whether the parking lot's oldest age is a
// lower bound: no message in it tells when it was parked, so the age runs
// from when the watch first saw it. atLeast and sinceFirstSeen say so
// where an alert quotes the age.
var lowerBound = `printf "` + watch.MetricAgeBound + `{vhost=%q,queue=%q} == 1" $labels.vhost $labels.queue | query`

var atLeast = `{{ with ` + lowerBound + ` }}at least {{ end }}`

var sinceFirstSeen = `{{ with ` + lowerBound + ` }} No message in it tells when it was parked: the age runs from when the watch first saw it.{{ end }}`

// openIt is the command that opens the parking lot, in its vhost whatever
// the person's config or URL names. It is pasted into a shell, so a name
// a shell would split or expand (a space, $, a quote) is single-quoted.
// protectIt is the command that lifts the parking lot's delivery limit.
var protectIt = `parkinglot --vhost ` + shellWord("$labels.vhost") + ` protect ` + shellWord("$labels.queue")

var openIt = `parkinglot --vhost ` + shellWord("$labels.vhost") + ` tui ` + shellWord("$labels.queue")

// shellWord is a template that writes v (a template value) as one POSIX
// shell word: as is when it holds only characters no shell reads
// specially, else in single quotes, where a quote inside ends them, is
// escaped and reopens them. match and reReplaceAll are Prometheus's
// template functions (Go's regexp).
func shellWord(v string) string {
	return `{{ if match "^[A-Za-z0-9_./:@%+=,-]+$" ` + v + ` }}{{ ` + v + ` }}{{ else }}'{{ reReplaceAll "'" "'\\''" ` + v + ` }}'{{ end }}`
}

// healthy is each target (job, instance) whose last scrape answered and
// that is not a watch saying it is not ready: its series are current.
var healthy = `(up == 1 unless on(job, instance) ` + watch.MetricReady + ` == 0)`

// hold is the part of an alert's expression that keeps it firing while
// the watch or daemon that exported its parking lot is silent (down, not
// ready, or no longer a target). A failed scrape marks a target's series
// stale: they vanish, which would resolve every alert at once and page
// them again on its return; the watch-down alert says why nothing moves
// meanwhile. value is the alert's condition on the last values of the
// silent targets; it holds only the alerts that were firing at the last
// evaluation (ALERTS), so it raises none that was resolved or pending.
// Prometheus's keep_firing_for would also hold the genuine resolve of a
// replayed parking lot; this holds for a silent target alone.
func hold(alert, on, value string) string {
	return fmt.Sprintf("(%s)\n  and on(%s) ALERTS{alertname=%q, alertstate=\"firing\"}", value, on, alert)
}

// silent keeps, of a vector by target, the series of the targets that are
// not healthy.
func silent(v string) string { return "(" + v + ")\n  unless on(job, instance) " + healthy }

const lotLabels = "job, instance, vhost, queue"

// depthOver writes cond for each queue given its own threshold, then for
// every other queue with 0, joined by or: the queues named are matched
// exactly (no regexp, which a queue's name could upset).
func depthOver(th map[string]int, cond func(sel string, over int) string) string {
	var parts, others []string
	for _, q := range slices.Sorted(maps.Keys(th)) {
		parts = append(parts, cond(fmt.Sprintf(`{queue=%q}`, q), th[q]))
		others = append(others, fmt.Sprintf(`queue!=%q`, q))
	}
	sel := ""
	if len(others) > 0 {
		sel = "{" + strings.Join(others, ",") + "}"
	}
	return strings.Join(append(parts, cond(sel, 0)), " or ")
}

// Rules builds the rules file for o.
func Rules(o Options) File {
	held := func(alert, on, expr, value string) string {
		if o.HoldFor <= 0 {
			return expr
		}
		return expr + "\nor\n" + hold(alert, on, value)
	}
	k := promDuration(o.HoldFor)
	ann := func(summary, description string) map[string]string {
		return map[string]string{
			"summary":         summary,
			"description":     description,
			"top_error_group": topError,
			"command":         openIt,
		}
	}
	window := promDuration(o.GrowingWindow)
	// Growing holds on the growth at the last step its target was healthy
	// (a range keeps a silent target's last samples, but its window slides
	// off the growth), also while a returned target has not yet two samples
	// in the window, when delta says nothing; not for a parking lot gone
	// from a healthy target.
	step := promDuration(min(o.GrowingWindow, time.Minute))
	newLot := fmt.Sprintf(`(%[3]s{error_group!="other"} > 0 and on(job, instance, vhost, queue, error_group) (time() - %[4]s < %[2]d)) or ((%[3]s{error_group!="other"} > 0 unless %[3]s offset %[1]s) and on(job, instance, vhost, queue) (count by(job, instance, vhost, queue) (%[3]s offset %[1]s) or %[5]s offset %[1]s == 0) unless on(job, instance, vhost, queue, error_group) %[4]s)`,
		promDuration(o.NewGroupWindow), int(o.NewGroupWindow.Seconds()), watch.MetricByError, watch.MetricGroupAge, watch.MetricParked)
	// A lot's groups are held while they are not known now: its target
	// silent, or (restarted) not scanned yet.
	heldLot := fmt.Sprintf(`last_over_time(%s{error_group!="other"}[%s]) > 0 unless on(%s) (%s and on(job, instance) %s)`,
		watch.MetricByError, k, lotLabels, watch.MetricLastScan, healthy)
	perVhost := func(e string) string { return "sum by(vhost, error_group) (max without(job, instance) (" + e + "))" }
	rules := []Rule{
		{
			Alert: AlertNotEmpty,
			Expr: held(AlertNotEmpty, lotLabels,
				depthOver(o.Thresholds, func(sel string, n int) string { return fmt.Sprintf("%s%s > %d", watch.MetricParked, sel, n) }),
				silent(depthOver(o.Thresholds, func(sel string, n int) string {
					return fmt.Sprintf("last_over_time(%s%s[%s]) > %d", watch.MetricParked, sel, k, n)
				}))),
			For: promDuration(o.NotEmptyFor),
			Annotations: ann("Parking lot "+where+" holds {{ $value | humanize }} message(s)",
				"Messages a consumer could not process are parked in "+where+". Top error: "+topError+". Look, fix, replay: "+openIt),
		},
		{
			Alert: AlertGrowing,
			Expr: held(AlertGrowing, lotLabels,
				fmt.Sprintf(`delta(%s[%s]) > 0`, watch.MetricParked, window),
				fmt.Sprintf("last_over_time((delta(%[1]s[%[2]s]) and on(job, instance) %[3]s)[%[4]s:%[5]s])\n  unless on(%[6]s) ((count_over_time(%[1]s[%[2]s]) >= 2 or (last_over_time(%[1]s[%[4]s]) unless %[1]s)) and on(job, instance) %[3]s)",
					watch.MetricParked, window, healthy, k, step, lotLabels)),
			For: window,
			// delta extrapolates to the window's ends (5.454545…): the
			// nearest count.
			Annotations: ann("Parking lot "+where+` grew by about {{ printf "%.0f" $value }} in `+window,
				"Failures are still arriving in "+where+". Top error: "+topError+". "+openIt),
		},
		{
			Alert: AlertOldMessage,
			Expr: held(AlertOldMessage, lotLabels,
				fmt.Sprintf(`%s > %d`, watch.MetricOldestAge, int(o.OldestThreshold.Seconds())),
				silent(fmt.Sprintf(`last_over_time(%s[%s]) > %d`, watch.MetricOldestAge, k, int(o.OldestThreshold.Seconds())))),
			For: promDuration(o.OldestFor),
			Annotations: ann("The oldest message in "+where+" was parked "+atLeast+"{{ $value | humanizeDuration }} ago",
				"Parked longer than "+promDuration(o.OldestThreshold)+": replay or remove it."+sinceFirstSeen+" Top error: "+topError+". "+openIt),
		},
		{
			Alert: AlertNewErrorGroup,
			// new: a group whose oldest message was parked within the
			// window. The messages say it, so a (re)started watch and a
			// group just grown out of "other" know it too. A group whose
			// messages tell no parked time is new when it was not there
			// a window ago, in a parking lot whose groups were known then:
			// counted, or none as it was empty (a restarted watch exports
			// the depths at once but the groups only after its first
			// scan). One alert per error and vhost, whatever the parking
			// lots (one failing dependency parks the same error in
			// each) or watches; its for: lets a group seen once pass.
			Expr: held(AlertNewErrorGroup, "vhost, error_group", perVhost(newLot), perVhost(heldLot)),
			For:  promDuration(o.NewGroupFor),
			Annotations: map[string]string{
				"summary": `New error in {{ $labels.vhost }}: {{ $labels.error_group }}`,
				"description": `{{ $value | humanize }} message(s) parked with an error new there in the last ` + promDuration(o.NewGroupWindow) +
					`: {{ $labels.error_group }}. Parking lots: ` + lotsOf + `. ` + openLargest,
				"top_error_group": `{{ $labels.error_group }}`,
				"queues":          lotsOf,
				"command":         openLargest,
			},
		},
		{
			Alert: AlertWatchDown,
			Expr: fmt.Sprintf(`up{job=%q} == 0 or %s{job=%q} == 0 or absent(up{job=%q})`,
				o.Job, watch.MetricReady, o.Job, o.Job),
			For: promDuration(o.WatchDownFor),
			Annotations: map[string]string{
				"summary":     `parkinglot watch {{ $labels.instance }} is down or not ready`,
				"description": `No parking lot of job ` + o.Job + ` is watched: nobody is told of new failures, and its parking lots' alerts stay as they were. Check the watch's /readyz (it names what is missing) and its log.`,
			},
		},
		{
			// A lost connection of whoever holds a parked message counts
			// toward a finite limit, and RabbitMQ 4.3 carries the count of
			// a message the limit parked into the lot: one lost connection
			// from being dropped. parkinglot makes such messages safe as it
			// reads them; protect lifts the limit for good.
			Alert: AlertDeliveryLimit,
			Expr: held(AlertDeliveryLimit, lotLabels,
				fmt.Sprintf(`%s >= 0 and on(%s) %s > 0`, watch.MetricLimit, lotLabels, watch.MetricParked),
				silent(fmt.Sprintf(`last_over_time(%s[%s]) >= 0 and on(%s) last_over_time(%s[%s]) > 0`, watch.MetricLimit, k, lotLabels, watch.MetricParked, k))),
			For: promDuration(o.LimitFor),
			Annotations: map[string]string{
				"summary":     "Parking lot " + where + " has a delivery limit of {{ $value }}: a lost connection can drop its messages",
				"description": "A lost connection of whoever holds a message of " + where + " (a consumer, a browse, the management UI's Get messages) counts toward its delivery limit, and RabbitMQ 4.3 parks a message the limit stopped with its count, one lost connection from being dropped. Lift the limit: " + protectIt,
				"command":     protectIt,
			},
		},
	}
	for i := range rules {
		r := &rules[i]
		r.Labels = maps.Clone(o.Labels)
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels["severity"] = o.Severity[r.Alert]
		if r.Labels["severity"] == "" {
			r.Labels["severity"] = Defaults().Severity[r.Alert]
		}
		if o.RunbookURL != "" {
			r.Annotations["runbook_url"] = o.RunbookURL
		}
	}
	return File{Groups: []Group{{Name: "parkinglot", Rules: rules}}}
}

// The parking lots of a new-error alert: where its group is parked now,
// the largest first, and the command that opens the largest.
var (
	lotsQuery = `printf "sort_desc(max by(queue) (` + watch.MetricByError + `{vhost=%q,error_group=%q}))" $labels.vhost $labels.error_group | query`
	lotsOf    = `{{ range $i, $s := ` + lotsQuery + ` }}{{ if $i }}, {{ end }}{{ $s.Labels.queue }}{{ else }}(none read now){{ end }}`
	// openLargest: inside with, . is the largest lot's sample.
	openLargest = `{{ with ` + lotsQuery + ` }}{{ with . | first }}parkinglot --vhost ` + shellWord("$labels.vhost") + ` tui ` + shellWord(".Labels.queue") + `{{ end }}{{ end }}`
)

// YAML is the rules file as Prometheus reads it.
func (f File) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// promDuration writes d the way Prometheus reads durations: 1h30m, 15m,
// 1m30s. Prometheus counts milliseconds: a part of one is rounded up, so a
// positive d is never written as nothing (an empty range, a lost for:).
func promDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if r := d % time.Millisecond; r != 0 {
		d += time.Millisecond - r
	}
	var s string
	if h := d / time.Hour; h > 0 {
		s += fmt.Sprintf("%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		s += fmt.Sprintf("%dm", m)
		d -= m * time.Minute
	}
	if sec := d / time.Second; sec > 0 {
		s += fmt.Sprintf("%ds", sec)
		d -= sec * time.Second
	}
	if ms := d / time.Millisecond; ms > 0 {
		s += fmt.Sprintf("%dms", ms)
	}
	return s
}
