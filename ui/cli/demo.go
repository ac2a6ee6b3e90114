package cli

import (
	"context"
	"encoding/json"
	"fmt"
	stdio "io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/daemon"
	"github.com/parkinglot/parkinglot/retrycore/demo"
	"github.com/parkinglot/parkinglot/ui"
)

// DemoOptions are `parkinglot demo`'s.
type DemoOptions struct {
	*Factory
	Name, QueueType string
	NoTUI, Clean    bool
	Timeout         time.Duration
}

// NewCmdDemo is `parkinglot demo`: a demo pipeline filled through the
// embedded consumer, then the TUI on its parking lot.
func NewCmdDemo(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Declare a demo pipeline, push good, flaky and poison payments through the consumer, open the TUI on its parking lot",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Name, "name", demo.DefaultName, "pipeline name, the prefix of its queues and exchanges")
	fl.StringVar(&opts.QueueType, "queue-type", "classic", "classic or quorum")
	fl.BoolVar(&opts.NoTUI, "no-tui", false, "seed only and print a summary (for scripts and tests)")
	fl.BoolVar(&opts.Clean, "clean", false, "delete the demo's queues and exchanges, and exit")
	fl.DurationVar(&opts.Timeout, "timeout", 90*time.Second, "how long to wait for the parking lot to fill")
	return cmd
}

// check refuses what the demo cannot do before anything is dialled.
func (o *DemoOptions) check() error {
	switch {
	case o.QueueType != "classic" && o.QueueType != "quorum":
		return usagef("--queue-type %q: want classic or quorum", o.QueueType)
	case o.Timeout <= 0:
		return usagef("--timeout %v: want a positive duration", o.Timeout)
	}
	return nil
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	f, io := opts.Factory, opts.IOStreams
	m, _, err := f.checkedManagement(ctx, "parkinglot demo "+opts.Name) // optional: without it the demo says less
	if err != nil {
		return err
	}
	log := f.Log
	if f.LogLevel == "info" { // the default: keep the consumer's routine lines out of the demo
		log = f.newLogger(slog.LevelWarn)
	}
	do := demo.Options{Name: opts.Name, QueueType: opts.QueueType, Broker: f.Conn.Options("parkinglot demo " + opts.Name),
		Management: m, Logger: log, Progress: demoProgress{io.ErrOut}, Timeout: opts.Timeout}
	if opts.Clean {
		return demo.Clean(ctx, do)
	}
	sum, err := demo.Seed(ctx, do)
	if err != nil {
		return err
	}
	if opts.NoTUI || !io.IsTerminal() {
		if f.JSON() {
			return json.NewEncoder(io.Out).Encode(sum)
		}
		return writeDemoSummary(io.Out, sum)
	}
	err = tuiRun(ctx, &TUIOptions{Factory: f, Options: ui.Options{Queue: sum.ParkingLot(), Notice: demoNotice(sum)}})
	fmt.Fprintf(io.ErrOut, "replayed messages wait in %s (the demo's consumer is stopped); `parkinglot demo --clean` removes the demo\n", sum.Pipeline.Main.Queue)
	return err
}

// demoProgress tells a person each step of the demo, a line each.
type demoProgress struct{ w stdio.Writer }

func (d demoProgress) Declared(p retrycore.Pipeline, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(d.w, "warning:", w)
	}
	fmt.Fprintf(d.w, "declared pipeline %s (%s queues): %s → %s, delays %s, parking lot %s\n",
		p.Name, p.QueueType, p.Main.Exchange, p.Main.Queue, demoDelays(p), p.Error.Queue)
}

func (d demoProgress) Earlier(n int) {
	fmt.Fprintf(d.w, "the parking lot already holds %d message(s) from an earlier run (parkinglot demo --clean removes the demo)\n", n)
}

func (d demoProgress) Published(n, parked int) {
	fmt.Fprintf(d.w, "published %d payments (%d will be parked: flaky-forever and poison); running the consumer…\n", n, parked)
}

func (d demoProgress) Filled(queue string, depth int) {
	fmt.Fprintf(d.w, "parking lot %s holds %d message(s); consumer stopped\n", queue, depth)
}

func (d demoProgress) Deleted(kind, name string, messages int) {
	if messages < 0 {
		fmt.Fprintf(d.w, "deleted %s %s\n", kind, name)
		return
	}
	fmt.Fprintf(d.w, "deleted %s %s (%d messages)\n", kind, name, messages)
}

// demoNotice is the TUI's first status line after a seed.
func demoNotice(s demo.Summary) string {
	n := fmt.Sprintf("demo: %d payments parked by this run", s.After-s.Before)
	if s.Before > 0 {
		n += fmt.Sprintf(" (%d from earlier runs; `parkinglot demo --clean` starts over)", s.Before)
	}
	return n + "; the consumer is stopped, so replayed ones wait in " + s.Pipeline.Main.Queue
}

// writeDemoSummary prints a seed's summary for people and scripts.
func writeDemoSummary(w stdio.Writer, s demo.Summary) error {
	p := s.Pipeline
	_, err := fmt.Fprintf(w, "demo pipeline %s (%s): published %d payments; %d parked by this run (parking lot %s holds %d) in %s\n"+
		"  consumer: %d done, %d retries, %d parked\n"+
		"  main %s → %s; retry %s (delays %s); parking lot %s\n",
		p.Name, p.QueueType, s.Published, s.After-s.Before, p.Error.Queue, s.After, s.Elapsed.Round(100*time.Millisecond),
		s.Outcomes[daemon.OutcomeLabelDone], s.Outcomes[daemon.OutcomeLabelRetried], s.Outcomes[daemon.OutcomeLabelParked],
		p.Main.Exchange, p.Main.Queue, p.Retry.Exchange, demoDelays(p), p.Error.Queue)
	return err
}

func demoDelays(p retrycore.Pipeline) string {
	ds := make([]string, len(p.Retry.Delays))
	for i, d := range p.Retry.Delays {
		ds[i] = d.Text
	}
	return strings.Join(ds, ", ")
}
