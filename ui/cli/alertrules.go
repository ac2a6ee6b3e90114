package cli

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
	var severities, labels, thresholds []string
	cmd := &cobra.Command{
		Use:   "alert-rules [--job NAME] [--not-empty-for D] [--threshold QUEUE=N] [--label K=V] [--runbook-url URL] …",
		Short: "Print Prometheus alerting rules for the metrics of parkinglot watch",
		Long: `Print a Prometheus rules file (groups: YAML) over the metrics of
'parkinglot watch': a parking lot not empty, growing, holding an old
message, a new error group, and the watch down. Each alert names the queue,
its top error group and the command that opens it. While the watch is down
or not ready, a firing alert holds on its last values (--hold-for). Load
it with rule_files: in prometheus.yml, e.g.

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
				{"--oldest-threshold", r.OldestThreshold, false}, {"--oldest-for", r.OldestFor, true}, {"--limit-for", r.LimitFor, true},
				{"--new-group-window", r.NewGroupWindow, false}, {"--new-group-for", r.NewGroupFor, true},
				{"--watch-down-for", r.WatchDownFor, true}, {"--hold-for", r.HoldFor, true},
			} {
				if c.v < time.Second && !(c.zeroOK && c.v == 0) {
					if c.zeroOK {
						return usagef("alert-rules: %s must be 0 or at least 1s, not %s", c.name, c.v)
					}
					return usagef("alert-rules: %s must be at least 1s, not %s", c.name, c.v)
				}
			}
			if !cmd.Flags().Changed("new-group-for") {
				// a window of 5m or less, given before the for: was, keeps working
				opts.Rules.NewGroupFor = min(r.NewGroupFor, r.NewGroupWindow/2)
			} else if r.NewGroupFor >= r.NewGroupWindow {
				// a group is new for the window alone: it would never fire
				return usagef("alert-rules: --new-group-for %s must be shorter than --new-group-window %s", r.NewGroupFor, r.NewGroupWindow)
			}
			if err := parseAlertRuleFlags(&opts.Rules, severities, labels, thresholds); err != nil {
				return err
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
	fl.DurationVar(&opts.Rules.LimitFor, "limit-for", d.LimitFor, "ParkingLotDeliveryLimit's for: (a parking lot holding messages under a finite delivery limit)")
	fl.DurationVar(&opts.Rules.NewGroupWindow, "new-group-window", d.NewGroupWindow, "ParkingLotNewErrorGroup: an error group not there this long ago")
	fl.DurationVar(&opts.Rules.NewGroupFor, "new-group-for", d.NewGroupFor, "ParkingLotNewErrorGroup's for: (at most half the window unless given)")
	fl.DurationVar(&opts.Rules.WatchDownFor, "watch-down-for", d.WatchDownFor, "ParkingLotWatchDown's for:")
	fl.DurationVar(&opts.Rules.HoldFor, "hold-for", d.HoldFor, "a firing parking-lot alert holds this long on the last values of a watch that is down or not ready (0: not at all)")
	fl.StringArrayVar(&thresholds, "threshold", nil, "QUEUE=N: ParkingLotNotEmpty fires for QUEUE above N messages, not 0 (repeatable)")
	fl.StringArrayVar(&severities, "severity", nil, "LEVEL: the severity label of the alerts that page (default page); ALERT=LEVEL: of that alert (repeatable)")
	fl.StringArrayVar(&labels, "label", nil, "NAME=VALUE: a label on every alert, e.g. team=payments (repeatable)")
	fl.StringVar(&opts.Rules.RunbookURL, "runbook-url", "", "the runbook_url annotation of every alert")
	return cmd
}

// parseAlertRuleFlags puts --severity, --label, --threshold and checks
// --runbook-url into o; the errors are usage errors, one line each.
func parseAlertRuleFlags(o *alerting.Options, severities, labels, thresholds []string) error {
	d := alerting.Defaults()
	for _, s := range severities {
		alert, level, named := strings.Cut(s, "=")
		if !named {
			level = s
		} else if !slices.Contains(alerting.Alerts, alert) {
			return usagef("alert-rules: --severity %q: no alert %q (%s)", s, alert, strings.Join(alerting.Alerts, ", "))
		}
		if err := alerting.CheckSeverity(level); err != nil {
			return usagef("alert-rules: --severity %q: %v", s, err)
		}
		for _, a := range alerting.Alerts {
			if a == alert || !named && d.Severity[a] == "page" {
				o.Severity[a] = level
			}
		}
	}
	for _, l := range labels {
		name, value, ok := strings.Cut(l, "=")
		if !ok {
			return usagef("alert-rules: --label %q: want NAME=VALUE", l)
		}
		if err := alerting.CheckLabel(name, value); err != nil {
			return usagef("alert-rules: --label %q: %v", l, err)
		}
		if _, twice := o.Labels[name]; twice {
			return usagef("alert-rules: --label %s given twice", name)
		}
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[name] = value
	}
	for _, t := range thresholds {
		// at the last =: a queue's name may hold one, a number does not
		i := strings.LastIndex(t, "=")
		if i <= 0 {
			return usagef("alert-rules: --threshold %q: want QUEUE=N", t)
		}
		queue, v := t[:i], t[i+1:]
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usagef("alert-rules: --threshold %q: N must be a whole number of messages, 0 or more", t)
		}
		if _, twice := o.Thresholds[queue]; twice {
			return usagef("alert-rules: --threshold for %s given twice", queue)
		}
		if o.Thresholds == nil {
			o.Thresholds = map[string]int{}
		}
		o.Thresholds[queue] = n
	}
	if o.RunbookURL != "" {
		u, err := url.Parse(o.RunbookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("alert-rules: --runbook-url %q: want an absolute http(s) URL", o.RunbookURL)
		}
	}
	return nil
}

func alertRulesRun(opts *AlertRulesOptions) error {
	b, err := alerting.Rules(opts.Rules).YAML()
	if err != nil {
		return err
	}
	_, err = opts.IOStreams.Out.Write(b)
	return err
}
