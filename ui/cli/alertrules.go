package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/ui/alerting"
)

// AlertRulesOptions are `parkinglot alert-rules`'s.
type AlertRulesOptions struct {
	*Factory
	Rules alerting.Options
}

// NewCmdAlertRules is `parkinglot alert-rules [flags]`: it prints the
// Prometheus rules file for what `parkinglot watch` exports, and dials
// nothing.
func NewCmdAlertRules(f *Factory, runF func(context.Context, *AlertRulesOptions) error) *cobra.Command {
	opts := &AlertRulesOptions{Factory: f, Rules: alerting.Defaults()}
	d := alerting.Defaults()
	cmd := &cobra.Command{
		Use:   "alert-rules [--job NAME] [--not-empty-for D] [--oldest-threshold D] …",
		Short: "Print Prometheus alerting rules for the metrics of parkinglot watch",
		Long: `Print a Prometheus rules file (groups: YAML) over the metrics of
'parkinglot watch': a parking lot not empty, growing, holding an old
message, a new error group, and the watch down. Each alert names the queue,
its top error group and the command that opens it. Load it with
rule_files: in prometheus.yml, e.g.

  parkinglot alert-rules > /etc/prometheus/parkinglot.rules.yml
  promtool check rules /etc/prometheus/parkinglot.rules.yml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Under a second is a slip (500us for 500s): the watch reads
			// and Prometheus scrapes no faster. A for: may be 0: at once.
			r := opts.Rules
			for _, c := range []struct {
				name   string
				v      time.Duration
				zeroOK bool
			}{
				{"--not-empty-for", r.NotEmptyFor, false}, {"--growing-window", r.GrowingWindow, false},
				{"--oldest-threshold", r.OldestThreshold, false}, {"--oldest-for", r.OldestFor, true},
				{"--new-group-window", r.NewGroupWindow, false}, {"--watch-down-for", r.WatchDownFor, true},
			} {
				if c.v < time.Second && !(c.zeroOK && c.v == 0) {
					if c.zeroOK {
						return usagef("alert-rules: %s must be 0 or at least 1s, not %s", c.name, c.v)
					}
					return usagef("alert-rules: %s must be at least 1s, not %s", c.name, c.v)
				}
			}
			if opts.Rules.Job == "" {
				return usagef("alert-rules: --job needs the Prometheus job name that scrapes the watch")
			}
			if opts.JSON() {
				return usagef("alert-rules: -o json does not apply: it prints a Prometheus rules file (YAML)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return alertRulesRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Rules.Job, "job", d.Job, "the Prometheus job that scrapes parkinglot watch")
	fl.DurationVar(&opts.Rules.NotEmptyFor, "not-empty-for", d.NotEmptyFor, "ParkingLotNotEmpty fires after the parking lot held messages this long")
	fl.DurationVar(&opts.Rules.GrowingWindow, "growing-window", d.GrowingWindow, "ParkingLotGrowing: growth over this window")
	fl.DurationVar(&opts.Rules.OldestThreshold, "oldest-threshold", d.OldestThreshold, "ParkingLotOldMessage: the oldest message parked longer than this")
	fl.DurationVar(&opts.Rules.OldestFor, "oldest-for", d.OldestFor, "ParkingLotOldMessage's for:")
	fl.DurationVar(&opts.Rules.NewGroupWindow, "new-group-window", d.NewGroupWindow, "ParkingLotNewErrorGroup: an error group not there this long ago")
	fl.DurationVar(&opts.Rules.WatchDownFor, "watch-down-for", d.WatchDownFor, "ParkingLotWatchDown's for:")
	return cmd
}

func alertRulesRun(opts *AlertRulesOptions) error {
	b, err := alerting.Rules(opts.Rules).YAML()
	if err != nil {
		return err
	}
	_, err = opts.IOStreams.Out.Write(b)
	return err
}
