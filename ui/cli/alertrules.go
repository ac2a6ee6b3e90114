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
			for name, v := range map[string]time.Duration{
				"--not-empty-for": opts.Rules.NotEmptyFor, "--growing-window": opts.Rules.GrowingWindow,
				"--oldest-threshold": opts.Rules.OldestThreshold, "--new-group-window": opts.Rules.NewGroupWindow,
			} {
				if v <= 0 {
					return usagef("alert-rules: %s must be positive", name)
				}
			}
			if opts.Rules.OldestFor < 0 || opts.Rules.WatchDownFor < 0 {
				return usagef("alert-rules: a for: duration cannot be negative")
			}
			if opts.Rules.Job == "" {
				return usagef("alert-rules: --job needs the Prometheus job name that scrapes the watch")
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
