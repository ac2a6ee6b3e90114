//go:build integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// A message that went through three delay tiers and was parked has its
// death history newest first in Deaths (which `show` lists; ui/cli tests
// that): the newest death (the last tier) first, times never increasing. What x-death holds
// depends on the version: 3.10–3.12 merge the array the consumer carried
// through each republish (one entry per tier); from 4.0 the broker no
// longer reads a client-set x-death, so the parked copy carries the array
// as the last tier's dead-lettering wrote it.
func TestDeathHistoryOfThreeTiersIsNewestFirst(t *testing.T) {
	v := brokertest.Version(t)
	for _, qt := range []string{retrycore.QueueClassic, retrycore.QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			// Whole seconds apart, so that every death has its own second.
			p := retrytest.Pipeline(t, qt, time.Second, 2*time.Second, 3*time.Second)
			l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error { return errors.New("not yet") }), nil)
			publishN(t, p, "tiers", 1, func(int) string { return "x" })
			var outcomes []string
			for _, r := range l.collect(func(all []Result) bool { return len(all) > 0 && all[len(all)-1].Outcome == OutcomeLabelParked }) {
				outcomes = append(outcomes, r.Outcome+" "+r.Tier)
			}
			if len(outcomes) != 4 {
				t.Fatalf("outcomes %q, want three retries and a park", outcomes)
			}
			if err := l.stop(); err != nil {
				t.Fatal(err)
			}
			tiers := retrytest.TierQueues(p)
			parked := brokertest.Drain(t, brokertest.Channel(t), p.Error.Queue)
			if len(parked) != 1 {
				t.Fatalf("parking lot holds %d messages", len(parked))
			}
			deaths, problems := retrycore.Deaths(parked[0].Headers)
			var got []string
			for i, d := range deaths {
				got = append(got, fmt.Sprintf("%s@%s", d.Queue, d.Time.Format("15:04:05")))
				if i > 0 && d.Time.After(deaths[i-1].Time) {
					t.Errorf("entry %d (%s) is newer than entry %d: %v", i, d.Time, i-1, got)
				}
			}
			want := []string{tiers[2], tiers[1], tiers[0]}
			if v.AtLeast(4, 0, 0) {
				want = want[:1]
			}
			if len(deaths) != len(want) || len(problems) > 0 {
				t.Fatalf("RabbitMQ %s: x-death %v (problems %q), want %d entries", v, got, problems, len(want))
			}
			if len(deaths) == 0 || deaths[0].Queue != tiers[2] {
				t.Fatalf("RabbitMQ %s: x-death %v, want the last tier %s first", v, got, tiers[2])
			}
			for i, d := range deaths {
				if i < len(want) && d.Queue != want[i] {
					t.Errorf("RabbitMQ %s: entry %d is %s, want %s (%v)", v, i, d.Queue, want[i], got)
				}
			}
			var raw []string
			for _, e := range parked[0].Headers[retrycore.HeaderDeath].([]any) {
				raw = append(raw, fmt.Sprint(e.(amqp.Table)["queue"]))
			}
			t.Logf("RabbitMQ %s %s: x-death newest first %v; the broker's array %v", v, qt, got, raw)
		})
	}
}
