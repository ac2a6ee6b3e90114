package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// labelWidth is the column of property and header names.
const labelWidth = 24

func (m *messageScreen) content() string {
	st := m.c.styles
	now := m.c.now()
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	row := func(label, value string) {
		add(st.Label.Render(pad(label, labelWidth)) + value)
	}
	f := m.sum.Facts

	add(st.Title.Render("Why it failed"))
	// A value the message carries is shown under its header's name; one
	// parkinglot derived (an error from x-death, attempts) under a label of
	// its own with where it came from, so it is not taken for a header the
	// application set.
	errText := clean(f.Error)
	if errText == "" {
		errText = st.Dim.Render("(no error recorded)")
	} else {
		errText = st.Important.Render(errText)
	}
	errLabel := "error"
	switch f.ErrorSource {
	case retrycore.HeaderLastError:
		errLabel = retrycore.HeaderLastError
	case "":
	default:
		errText += st.Dim.Render("  (from " + clean(f.ErrorSource) + ")")
	}
	row(errLabel, errText)
	attempts := st.Important.Render(strconv.FormatInt(f.Attempts, 10))
	if f.AttemptsSource != "" {
		attempts += st.Dim.Render("  (" + clean(f.AttemptsSource) + ")")
	} else {
		attempts += st.Dim.Render("  (nothing in the message counts them)")
	}
	row("attempts", attempts)
	if f.FailureKind != "" {
		row(retrycore.HeaderFailureKind, clean(f.FailureKind))
	}
	if f.ErrorType != "" {
		row("error type", clean(f.ErrorType))
	}
	if m.sum.Origin != nil {
		row("origin (replay goes to)", originText(m.sum)+st.Dim.Render("  (from "+clean(m.sum.Origin.Source)+")"))
	} else {
		row("origin (replay goes to)", st.Warning.Render(clean(orDash(m.sum.OriginErr)))+st.Dim.Render("  (type a destination in the replay dialog)"))
	}
	if !f.FirstFailedAt.IsZero() {
		row("first failed", format.TimeAgo(f.FirstFailedAt, now))
	}
	row("parked", format.TimeAgo(m.sum.ParkedAt, now))
	if f.CameBack {
		row("came back", clean(format.CameBack(f, now)))
	} else if f.ReplayCount > 0 {
		row("replayed before", fmt.Sprintf("%d time(s), last %s", f.ReplayCount, format.TimeAgo(f.ReplayedAt, now)))
	}
	if f.DeliveryCount != nil {
		row(retrycore.HeaderDeliveryCount, strconv.FormatInt(*f.DeliveryCount, 10)+st.Dim.Render("  ("+format.DeliveryCountMeaning+")"))
	}
	if f.AcquiredCount != nil {
		row(retrycore.HeaderAcquiredCount, strconv.FormatInt(*f.AcquiredCount, 10)+st.Dim.Render("  ("+format.AcquiredCountMeaning+")"))
	}
	for _, p := range f.Problems {
		add(st.Warning.Render("⚠ " + clean(p)))
	}

	add("", st.Title.Render("Death history")+st.Dim.Render(" (x-death, newest first)"))
	add(m.timeline(f.Deaths, now)...)

	if m.msg == nil {
		add("")
		switch {
		case m.loadErr != nil:
			add(st.Error.Render("✗ " + clean(m.loadErr.Error())))
		case m.loading:
			add(st.Dim.Render("Loading properties, headers and body…"))
		default:
			add(st.Dim.Render("Properties, headers and body appear when the list has finished loading."))
		}
		return strings.Join(lines, "\n")
	}
	add("", st.Title.Render("Properties"))
	for _, p := range properties(m.msg) {
		row(p[0], clean(p[1]))
	}
	add("", st.Title.Render("Headers"))
	for _, k := range format.HeaderOrder(m.msg.Headers) {
		v := m.msg.Headers[k]
		if k == retrycore.HeaderDeath {
			row(k, st.Dim.Render(fmt.Sprintf("%d entries (the death history above)", len(f.Deaths))))
			continue
		}
		row(clean(k), format.Cut(fmtValue(v), max(m.width-labelWidth, 20)))
	}
	if len(m.msg.Headers) == 0 {
		add(st.Dim.Render("(none)"))
	}
	var shown []string
	var kind format.BodyKind
	var note string
	if m.raw {
		shown, kind, note = rawHex(m.msg.Body), "raw", "the bytes as they are, nothing undone or decoded (v: as read)"
	} else {
		shown, kind, note = renderBody(st, m.c.bodies.Read(m.queue, *m.msg), m.msg.Properties.ContentType)
	}
	add("", st.Title.Render("Body")+st.Dim.Render(fmt.Sprintf(" (%s, %d bytes)", kind, len(m.msg.Body))))
	if note != "" {
		add(st.Warning.Render(note))
	}
	add(shown...)
	return strings.Join(lines, "\n")
}

// timeline draws x-death as a vertical timeline, newest first.
func (m *messageScreen) timeline(deaths []retrycore.Death, now time.Time) []string {
	st := m.c.styles
	if len(deaths) == 0 {
		return []string{st.Dim.Render("(none: the message was parked without dead-lettering)")}
	}
	qw := 0
	for _, d := range deaths {
		qw = max(qw, len(d.Queue))
	}
	qw = min(qw, 40)
	var lines []string
	for i, d := range deaths {
		if i > 0 {
			lines = append(lines, st.Dim.Render("  │"))
		}
		route := clean(format.Destination(retrycore.Destination{Exchange: d.Exchange, RoutingKey: strings.Join(d.RoutingKeys, ", ")}))
		reason := pad(clean(d.Reason), 9) + " ×" + padLeft(fitCount(d.Count, 3), 3)
		line := "  " + st.Info.Render("●") + " " + pad(clean(d.Queue), qw) + "  " + st.Bold.Render(reason) + "  " + route + "  " + st.Dim.Render(format.TimeAgo(d.Time, now))
		lines = append(lines, line)
		if d.OriginalExpiration != "" {
			lines = append(lines, st.Dim.Render("  │   original expiration "+clean(d.OriginalExpiration)+" ms"))
		}
	}
	return lines
}

// properties lists the message's non-empty basic properties (the rule
// show uses too) and where it was delivered from.
func properties(msg *broker.Message) [][2]string {
	var out [][2]string
	for _, f := range format.Properties(msg.Properties) {
		out = append(out, [2]string{f.Name, f.Value})
	}
	out = append(out, [2]string{"delivered from", format.Destination(retrycore.Destination{Exchange: msg.Exchange, RoutingKey: msg.RoutingKey})})
	if msg.Redelivered {
		out = append(out, [2]string{"redelivered", "yes (browsing gives messages back; the broker marks them)"})
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
