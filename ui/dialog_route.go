package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// maxPlanRoutes bounds the destinations listed; the rest are counted.
const maxPlanRoutes = 5

// routePart is what a replay and an edit share: where the messages go.
// It holds the destination field and the choice of the failed queue
// alone, and shows the plan — the resolved origin, where it came from,
// the queues it reaches and the warnings — for exactly what the fields
// say, before anything is sent.
type routePart struct {
	dest      textinput.Model
	onlyQueue bool

	plan     *Plan
	planErr  error
	planning bool
	planSeq  int
	planned  string             // the destination text and target the plan is for
	stopPlan context.CancelFunc // stops the latest plan: the next one or closing calls it
}

func newRoutePart() routePart {
	return routePart{dest: newTextField("EXCHANGE:ROUTING_KEY (empty: the origin above)", 512)}
}

// request adds the destination and the target to req.
func (r *routePart) request(d *dialog, req *ActionRequest) error {
	if r.onlyQueue {
		req.Target = replay.TargetQueue
	}
	if s := strings.TrimSpace(r.dest.Value()); s != "" {
		dest, err := retrycore.ParseDestination(s)
		if err != nil {
			return err
		}
		req.To = &dest
	}
	// The engine's one rule, as on the command line: a typed destination
	// and "the failed queue alone" exclude each other.
	if err := replay.CheckDestination(req.To, req.Target); errors.Is(err, replay.ErrTwoDestinations) {
		return fmt.Errorf("%w: clear the destination, or press %s to send there instead of the failed queue", replay.ErrTwoDestinations, d.c.keys.ToggleTarget.Help().Key)
	}
	return nil
}

func (r *routePart) planKey() string {
	return strings.TrimSpace(r.dest.Value()) + "\x00" + strconv.FormatBool(r.onlyQueue)
}

// replan asks for the plan of what the fields say now. A plan reads the
// queue: the one before is stopped, and this one starts once it gave its
// messages back (loadPlan).
func (r *routePart) replan(d *dialog) tea.Cmd {
	r.stop()
	req, err := d.request()
	r.planned = r.planKey()
	r.planSeq++
	if err != nil {
		r.plan, r.planErr, r.planning = nil, err, false
		return nil
	}
	r.planning, d.problem = true, ""
	var cmd tea.Cmd
	r.stopPlan, cmd = loadPlan(d.c, d, r.planSeq, req)
	return cmd
}

// stop cancels the plan under way, if any.
func (r *routePart) stop() {
	if r.stopPlan != nil {
		r.stopPlan()
		r.stopPlan = nil
	}
}

// routeOf is the dialog's route part, nil for an action without one.
func routeOf(d *dialog) *routePart {
	switch a := d.act.(type) {
	case *replayAction:
		return &a.route
	case *editAction:
		return &a.route
	}
	return nil
}

// update takes the plan asked for, and in the confirm state the target
// toggle and the field keys, which preview a changed destination.
func (r *routePart) update(d *dialog, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case planMsg:
		if msg.d == d && msg.seq == r.planSeq {
			r.planning = false
			r.plan, r.planErr = &msg.plan, msg.err
			if msg.err != nil {
				r.plan = nil
			}
		}
		return nil, true
	case tea.KeyMsg:
		if d.state != dlgConfirm {
			return nil, false
		}
		if key.Matches(msg, d.c.keys.ToggleTarget) {
			r.onlyQueue = !r.onlyQueue
			return r.replan(d), true
		}
		if cmd, ok := d.tabKey(msg); ok {
			if r.planKey() != r.planned {
				return tea.Batch(cmd, r.replan(d)), true
			}
			return cmd, true
		}
	}
	return nil, false
}

// check holds the action back until the plan on screen is the one for the
// fields, and says why nothing would be sent.
func (r *routePart) check(d *dialog) (string, tea.Cmd) {
	switch {
	case r.planning:
		return "still resolving the route; confirm once it is shown", nil
	case r.planKey() != r.planned:
		return "", r.replan(d)
	case r.plan == nil:
		return "no plan: see the error above; type a destination or press esc", nil
	case r.plan.Messages == 0:
		return "nothing would be sent: type a destination (EXCHANGE:ROUTING_KEY) or press esc", nil
	}
	return "", nil
}

// confirmLines are the plan, the destination field, the action's own
// fields (more) and the target.
func (r *routePart) confirmLines(d *dialog, inner int, more ...string) []string {
	st := d.c.styles
	lines := r.planLines(d, inner)
	lines = append(lines, "", d.field(0, "Destination", r.dest.View()))
	lines = append(lines, more...)
	target := "origin (all queues bound to it)"
	if r.onlyQueue {
		target = "the failed queue alone (default exchange)"
	}
	return append(lines, st.Dim.Render("  Send to     ")+target+st.Dim.Render("  (ctrl+t)"))
}

// help adds the target toggle to the confirm state's keys.
func (r *routePart) help(d *dialog) []key.Binding {
	if d.state != dlgConfirm {
		return nil
	}
	return append(d.confirmHelp(), described(d.c.keys.ToggleTarget, "target"))
}

// planLines show exactly what a replay would do.
func (r *routePart) planLines(d *dialog, inner int) []string {
	st := d.c.styles
	switch {
	case r.planning:
		return []string{st.Dim.Render("Resolving the origin and the route…")}
	case r.planErr != nil:
		return []string{st.Error.Render("✗ " + clean(r.planErr.Error()))}
	case r.plan == nil:
		return nil
	}
	p := r.plan
	var lines []string
	for i, r := range p.Routes {
		if i == maxPlanRoutes {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("… and %d more destinations", len(p.Routes)-i)))
			break
		}
		prefix := "→ "
		if len(p.Routes) > 1 || d.bulk {
			prefix = fmt.Sprintf("%d × → ", r.Messages)
		}
		dest := clean(r.Destination.String())
		switch {
		case !r.Known:
			why := "route unknown (management API unavailable)"
			if r.Problem != "" {
				why = r.Problem
			}
			lines = append(lines, prefix+dest+st.Dim.Render(" → "+clean(why)))
		case r.Unroutable() && r.Problem != "":
			lines = append(lines, prefix+dest+st.Error.Render(" → "+clean(r.Problem)+": it would stay parked"))
		case r.Unroutable():
			lines = append(lines, prefix+dest+st.Error.Render(" → reaches NO queue: the broker would return it and it stays parked"))
		default:
			lines = append(lines, prefix+dest+" → reaches "+st.Bold.Render(clean(strings.Join(r.Queues, ", "))))
		}
		if r.Source != "" {
			lines = append(lines, st.Dim.Render("  origin from "+clean(r.Source)))
		}
		if len(r.CCQueues) > 0 {
			lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ the CC/BCC header it keeps (%s) also reaches %s",
				clean(strings.Join(r.CC, ", ")), clean(strings.Join(r.CCQueues, ", ")))))
		}
		if others := otherQueues(r); len(others) > 0 {
			lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ also reaches %s: other consumers get a copy again — ctrl+t sends to %s alone",
				clean(strings.Join(others, ", ")), clean(strings.Join(r.FailedQueues, ", ")))))
		}
	}
	if len(p.Resets) > 0 {
		lines = append(lines, st.Dim.Render("resets "+format.Resets(p.Resets)))
	}
	if p.Unresolved > 0 {
		lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ %d message(s): cannot tell where they came from — type a destination", p.Unresolved)))
	}
	for _, w := range p.Warnings {
		lines = append(lines, st.Warning.Render("⚠ "+clean(w)))
	}
	return lines
}

// otherQueues are the queues a route reaches besides the one that failed.
func otherQueues(r PlannedRoute) []string {
	if len(r.FailedQueues) == 0 || !r.Known {
		return nil
	}
	var out []string
	for _, q := range r.Queues {
		if !contains(r.FailedQueues, q) {
			out = append(out, q)
		}
	}
	return out
}
