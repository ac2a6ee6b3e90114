package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

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

func demoRun(ctx context.Context, opts *DemoOptions) error {
	f, io := opts.Factory, opts.IOStreams
	m, _ := f.Conn.Management() // optional: without it the demo says less
	log := f.Log
	if f.LogLevel == "info" { // the default: keep the consumer's routine lines out of the demo
		log = f.newLogger(slog.LevelWarn)
	}
	do := demo.Options{Name: opts.Name, QueueType: opts.QueueType, Broker: f.Conn.Options("parkinglot demo " + opts.Name),
		Management: m, Logger: log, Progress: io.ErrOut, Timeout: opts.Timeout}
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
		return sum.WriteText(io.Out)
	}
	err = tuiRun(ctx, &TUIOptions{Factory: f, Options: ui.Options{Queue: sum.ParkingLot(), Notice: sum.Notice()}})
	fmt.Fprintf(io.ErrOut, "replayed messages wait in %s (the demo's consumer is stopped); `parkinglot demo --clean` removes the demo\n", sum.Pipeline.Main.Queue)
	return err
}
