package broker

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A quorum queue's leader that does not answer in time makes the broker
// say 0 ready and 0 consumers: with the pass's own consumer open that is
// no answer, and the pass must not end on it as if the queue were done
// (seen on the cluster mid-election). A classic queue's 0 is an answer,
// and so is one that counts a consumer, or a quorum 0 after the pass
// cancelled its own consumer.
func TestAnEmptyAnswerWithoutThePasssConsumerIsNoAnswer(t *testing.T) {
	for _, c := range []struct {
		name      string
		typ       string
		consumers int
		cancelled bool
		want      bool
	}{
		{"quorum, no consumer counted", "quorum", 0, false, true},
		{"unknown type, no consumer counted", "", 0, false, true},
		{"quorum, its consumer counted", "quorum", 1, false, false},
		{"quorum, its consumer cancelled by the pass", "quorum", 0, true, false},
		{"classic", "classic", 0, false, false},
	} {
		p := &Pass{facts: QueueFacts{Type: c.typ}, consumers: []*consumer{{cancelled: c.cancelled}}}
		if got := p.unanswered(amqp.Queue{Consumers: c.consumers}); got != c.want {
			t.Errorf("%s: unanswered %v, want %v", c.name, got, c.want)
		}
	}
}
