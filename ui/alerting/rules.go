// Package alerting writes the Prometheus alerting rules that ship with
// parkinglot: rules over what `parkinglot watch` exports (replay/watch's
// metric names), with annotations an on-call engineer can act on — the
// queue, its top error group and the command that opens it.
package alerting

import (
	"bytes"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Options are the thresholds and durations of the rules; Defaults holds
// what a team would start with.
type Options struct {
	Job             string        // the Prometheus job that scrapes the watch
	NotEmptyFor     time.Duration // a parking lot holding messages this long pages
	GrowingWindow   time.Duration // growth is measured over this window
	OldestThreshold time.Duration // the oldest message older than this
	OldestFor       time.Duration
	NewGroupWindow  time.Duration // a group absent this long ago is new
	WatchDownFor    time.Duration
}

// Defaults: page when a parking lot has held messages for 2 minutes (the
// "> 0 pages someone" of a parking lot that is watched), warn when it
// grew over 15 minutes, when its oldest message is over an hour old, when
// an error group appeared within the hour, and when the watch has been
// down or not ready for 5 minutes.
func Defaults() Options {
	return Options{
		Job:             "parkinglot",
		NotEmptyFor:     2 * time.Minute,
		GrowingWindow:   15 * time.Minute,
		OldestThreshold: time.Hour,
		OldestFor:       5 * time.Minute,
		NewGroupWindow:  time.Hour,
		WatchDownFor:    5 * time.Minute,
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
)

// topError is an annotation template that asks Prometheus for the
// parking lot's largest error group when the alert fires.
const topError = `{{ with printf "topk(1, parkinglot_parked_messages_by_error{vhost=%q,queue=%q})" $labels.vhost $labels.queue | query }}{{ . | first | label "error_group" }}{{ else }}(no error group scanned yet){{ end }}`

const where = `{{ $labels.vhost }} {{ $labels.queue }}`

// openIt is the command that opens the parking lot, in its vhost whatever
// the person's config or URL names. It is pasted into a shell, so a name
// a shell would split or expand (a space, $, a quote) is single-quoted.
var openIt = `parkinglot --vhost ` + shellWord("vhost") + ` tui ` + shellWord("queue")

// shellWord is a template that writes a label as one POSIX shell word:
// as is when it holds only characters no shell reads specially, else in
// single quotes, where a quote inside ends them, is escaped and reopens
// them. match and reReplaceAll are Prometheus's template functions (Go's
// regexp).
func shellWord(label string) string {
	v := "$labels." + label
	return `{{ if match "^[A-Za-z0-9_./:@%+=,-]+$" ` + v + ` }}{{ ` + v + ` }}{{ else }}'{{ reReplaceAll "'" "'\\''" ` + v + ` }}'{{ end }}`
}

// Rules builds the rules file for o.
func Rules(o Options) File {
	ann := func(summary, description string) map[string]string {
		return map[string]string{
			"summary":         summary,
			"description":     description,
			"top_error_group": topError,
			"command":         openIt,
		}
	}
	rules := []Rule{
		{
			Alert:  AlertNotEmpty,
			Expr:   `parkinglot_parked_messages > 0`,
			For:    promDuration(o.NotEmptyFor),
			Labels: map[string]string{"severity": "page"},
			Annotations: ann("Parking lot "+where+" holds {{ $value }} message(s)",
				"Messages a consumer could not process are parked in "+where+". Top error: "+topError+". Look, fix, replay: "+openIt),
		},
		{
			Alert:  AlertGrowing,
			Expr:   fmt.Sprintf(`delta(parkinglot_parked_messages[%s]) > 0`, promDuration(o.GrowingWindow)),
			For:    promDuration(o.GrowingWindow),
			Labels: map[string]string{"severity": "warning"},
			Annotations: ann("Parking lot "+where+" grew by {{ $value }} in "+promDuration(o.GrowingWindow),
				"Failures are still arriving in "+where+". Top error: "+topError+". "+openIt),
		},
		{
			Alert:  AlertOldMessage,
			Expr:   fmt.Sprintf(`parkinglot_oldest_parked_age_seconds > %d`, int(o.OldestThreshold.Seconds())),
			For:    promDuration(o.OldestFor),
			Labels: map[string]string{"severity": "warning"},
			Annotations: ann("The oldest message in "+where+" was parked {{ $value | humanizeDuration }} ago",
				"Parked longer than "+promDuration(o.OldestThreshold)+": replay or remove it. Top error: "+topError+". "+openIt),
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
			// scan). No for: news of an error should not wait.
			Expr: fmt.Sprintf(`(parkinglot_parked_messages_by_error{error_group!="other"} > 0 and on(job, instance, vhost, queue, error_group) (time() - parkinglot_error_group_oldest_parked_timestamp_seconds < %[2]d)) or ((parkinglot_parked_messages_by_error{error_group!="other"} > 0 unless parkinglot_parked_messages_by_error offset %[1]s) and on(job, instance, vhost, queue) (count by(job, instance, vhost, queue) (parkinglot_parked_messages_by_error offset %[1]s) or parkinglot_parked_messages offset %[1]s == 0) unless on(job, instance, vhost, queue, error_group) parkinglot_error_group_oldest_parked_timestamp_seconds)`,
				promDuration(o.NewGroupWindow), int(o.NewGroupWindow.Seconds())),
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":         `New error in ` + where + `: {{ $labels.error_group }}`,
				"description":     `{{ $value }} message(s) parked with an error new there in the last ` + promDuration(o.NewGroupWindow) + `: {{ $labels.error_group }}. ` + openIt,
				"top_error_group": `{{ $labels.error_group }}`,
				"command":         openIt,
			},
		},
		{
			Alert: AlertWatchDown,
			Expr: fmt.Sprintf(`up{job=%q} == 0 or parkinglot_watch_ready{job=%q} == 0 or absent(up{job=%q})`,
				o.Job, o.Job, o.Job),
			For:    promDuration(o.WatchDownFor),
			Labels: map[string]string{"severity": "page"},
			Annotations: map[string]string{
				"summary":     `parkinglot watch {{ $labels.instance }} is down or not ready`,
				"description": `No parking lot of job ` + o.Job + ` is watched: nobody is told of new failures. Check the watch's /readyz (it names what is missing) and its log.`,
			},
		},
	}
	return File{Groups: []Group{{Name: "parkinglot", Rules: rules}}}
}

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
