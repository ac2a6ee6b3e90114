package benchtest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Ratios from one run are not stable on a shared machine (the
// same replay measured 0.84 on a quiet run and 0.54 on
// a busy one), so every benchmark alternates its measured run with its
// baselines — A B A B …, BenchRounds pairs — and reports the median ratio
// of the pairs with its min–max, beside the median rates.

// DefaultRounds is how many measured runs (and as many of each baseline)
// a benchmark makes unless $PARKINGLOT_BENCH_ROUNDS asks for more.
const DefaultRounds = 3

// BenchRounds is $PARKINGLOT_BENCH_ROUNDS, or DefaultRounds when it is
// unset; it may raise the rounds, never lower them below DefaultRounds (a
// median and a spread need three).
func BenchRounds(tb testing.TB) int {
	tb.Helper()
	s := os.Getenv("PARKINGLOT_BENCH_ROUNDS")
	if s == "" {
		return DefaultRounds
	}
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		tb.Fatalf("PARKINGLOT_BENCH_ROUNDS=%q: want a positive number", s)
	}
	return max(n, DefaultRounds)
}

// Ratios are the figures of the rounds of one comparison: Measured[i] and
// Baseline[i] are round i's figures (rates, or for a budget the figure
// used and the budget), measured one right after the other.
type Ratios struct {
	Measured []float64
	Baseline []float64
	// Budget marks a budget line: Baseline is the budget, each ratio is
	// used / budget (below 1 meets it), and the rounds are not pairs.
	Budget bool
}

// Budget is the Ratios of a figure against a fixed budget, one figure a
// round.
func Budget(used []float64, budget float64) Ratios {
	b := make([]float64, len(used))
	for i := range b {
		b[i] = budget
	}
	return Ratios{Measured: slices.Clone(used), Baseline: b, Budget: true}
}

// Rounds is how many rounds have both figures.
func (r Ratios) Rounds() int { return min(len(r.Measured), len(r.Baseline)) }

// Each is the ratio of every round, measured / baseline (0 where the
// baseline is 0).
func (r Ratios) Each() []float64 {
	out := make([]float64, r.Rounds())
	for i := range out {
		if r.Baseline[i] > 0 {
			out[i] = r.Measured[i] / r.Baseline[i]
		}
	}
	return out
}

// Ratio is the median of the rounds' ratios with their min and max.
func (r Ratios) Ratio() (median, lo, hi float64) {
	each := r.Each()
	if len(each) == 0 {
		return 0, 0, 0
	}
	return Median(each), slices.Min(each), slices.Max(each)
}

// MeasuredMedian and BaselineMedian are the median figures of each side.
func (r Ratios) MeasuredMedian() float64 { return Median(r.Measured[:r.Rounds()]) }
func (r Ratios) BaselineMedian() float64 { return Median(r.Baseline[:r.Rounds()]) }

// Median is the middle value of vs (the mean of the middle two for an even
// count; 0 for none). vs is not changed.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Alternate runs measured and baseline one after the other, rounds times
// (A B A B …), and returns their figures. Each function runs its round in
// full — seeding what it consumes outside the part it times — and returns
// its figure (a rate, normally). The benchmark's timer is stopped: measured
// may start and stop it around its timed part, so that ns/op counts the
// measured runs alone.
func Alternate(b *testing.B, rounds int, measured, baseline func(round int) float64) Ratios {
	b.Helper()
	return AlternateAll(b, rounds, measured, baseline)[0]
}

// AlternateAll is Alternate with several baselines (A B C A B C …): one
// Ratios per baseline, in order, each with the same measured figures.
func AlternateAll(b *testing.B, rounds int, measured func(round int) float64, baselines ...func(round int) float64) []Ratios {
	b.Helper()
	b.StopTimer()
	ms := make([]float64, 0, rounds)
	bs := make([][]float64, len(baselines))
	for round := 0; round < rounds; round++ {
		ms = append(ms, measured(round))
		b.StopTimer()
		for i, base := range baselines {
			bs[i] = append(bs[i], base(round))
		}
	}
	out := make([]Ratios, len(baselines))
	for i := range baselines {
		out[i] = Ratios{Measured: ms, Baseline: bs[i]}
	}
	return out
}

// BenchLine prints one comparison's figures line,
//
//	name  msgs  median msg/s  median baseline msg/s  ratio=0.93 (0.88–0.97, 3 pairs)
//
// (for a budget: the median figure, the budget, and "N rounds") on stdout
// (go test -bench shows it), reports the medians and the ratio's median,
// min and max as metrics for benchstat, and appends the line to
// $PARKINGLOT_FIGURES when set. unit names what the figures count ("msg/s"
// unless a benchmark says otherwise).
func BenchLine(b *testing.B, name string, msgs int, r Ratios, unit string) {
	b.Helper()
	if unit == "" {
		unit = "msg/s"
	}
	rate, baseline := r.MeasuredMedian(), r.BaselineMedian()
	ratio, lo, hi := r.Ratio()
	rounds := fmt.Sprintf("%d pairs", r.Rounds())
	if r.Budget {
		rounds = fmt.Sprintf("%d rounds", r.Rounds())
	}
	line := fmt.Sprintf("%s  %d  %s %s  %s %s  ratio=%.2f (%.2f–%.2f, %s)",
		name, msgs, figure(rate), unit, figure(baseline), unit, ratio, lo, hi, rounds)
	fmt.Println(line)
	// A benchmark may print several lines (one per baseline): the
	// baseline's metrics are named after it ("replay-vs-shovel": shovel;
	// a parenthesised note is left out). A budget line's metrics are named
	// after what it measures ("browse-first-page-vs-200ms-budget":
	// browse-first-page).
	metric := strings.ReplaceAll(unit, " ", "_")
	what, base, ok := strings.Cut(name, "-vs-")
	if !ok {
		base = name
	}
	base, _, _ = strings.Cut(base, "(")
	if r.Budget {
		b.ReportMetric(rate, what+"_"+metric)
		b.ReportMetric(ratio, "ratio_"+what)
		b.ReportMetric(lo, "ratio_min_"+what)
		b.ReportMetric(hi, "ratio_max_"+what)
	} else {
		b.ReportMetric(rate, metric)
		b.ReportMetric(baseline, base+"_"+metric)
		b.ReportMetric(ratio, "ratio_"+base)
		b.ReportMetric(lo, "ratio_min_"+base)
		b.ReportMetric(hi, "ratio_max_"+base)
	}
	appendFigures(line)
}

// BenchNote prints a line of information under a benchmark's figures
// lines (the rounds' figures, a cross-check) on stdout and in
// $PARKINGLOT_FIGURES.
func BenchNote(format string, args ...any) {
	line := "  (" + fmt.Sprintf(format, args...) + ")"
	fmt.Println(line)
	appendFigures(line)
}

// appendFigures appends a line to $PARKINGLOT_FIGURES when set (`make
// bench` prints that file at the end).
func appendFigures(line string) {
	if path := os.Getenv("PARKINGLOT_FIGURES"); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, _ = fmt.Fprintln(f, line)
			_ = f.Close()
		}
	}
}

// RoundFigures lists the rounds' figures, "6896 7253 6512", for a
// BenchNote.
func RoundFigures(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = figure(v)
	}
	return strings.Join(s, " ")
}
