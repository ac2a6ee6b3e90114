package benchtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// The replay and daemon benchmarks declare classic queues, unless
// $PARKINGLOT_BENCH_QUEUE_TYPE=quorum (`make
// bench-cluster` runs them on quorum queues replicated over the three
// nodes of `make cluster`). The measured run and its baselines then share
// the same quorum queues, so each ratio still compares like with like, and
// the lines are named after the queue type and the replicas the broker
// gave the queue (BenchQueues.Name).

// BenchQueueTypeEnv names the variable that picks the benchmarks' queue
// type.
const BenchQueueTypeEnv = "PARKINGLOT_BENCH_QUEUE_TYPE"

// BenchQueueType is $PARKINGLOT_BENCH_QUEUE_TYPE: "classic" (also when
// unset) or "quorum"; anything else fails the benchmark.
func BenchQueueType(tb testing.TB) string {
	tb.Helper()
	switch t := os.Getenv(BenchQueueTypeEnv); t {
	case "", "classic":
		return "classic"
	case "quorum":
		return t
	default:
		tb.Fatalf("%s=%q: want classic or quorum", BenchQueueTypeEnv, t)
		return ""
	}
}

// BenchQueueArgs are the declare arguments of a benchmark's queue of
// BenchQueueType: none for classic; `x-queue-type: quorum` for quorum (on
// the three-node cluster of `make cluster` it gets a replica on each node
// by default: RabbitMQ docs, "Quorum Queues", replication factor;
// DescribeBenchQueue reads back the replicas it got). A parking
// lot also gets what retrycore declares for one (the pipeline
// file's rule): `x-delivery-limit: -1` on RabbitMQ 4.0+, which made 20 the
// default.
func BenchQueueArgs(tb testing.TB, parkingLot bool) amqp.Table {
	tb.Helper()
	if BenchQueueType(tb) != "quorum" {
		return nil
	}
	args := amqp.Table{"x-queue-type": "quorum"}
	if parkingLot && brokertest.Version(tb).AtLeast(4, 0, 0) {
		args["x-delivery-limit"] = int64(-1)
	}
	return args
}

// BenchQueues describes the queues a benchmark measured on: their type
// and, for a quorum queue, its replicas (members), those online and its
// leader, as the management API lists them.
type BenchQueues struct {
	Type    string
	Members int
	Online  int
	Leader  string
}

// DescribeBenchQueue reads a declared benchmark queue from the management
// API (for a quorum queue it waits, bounded, until the queue has elected
// a leader) and fails the benchmark unless it is of BenchQueueType.
func DescribeBenchQueue(tb testing.TB, queue string) BenchQueues {
	tb.Helper()
	want := BenchQueueType(tb)
	if want == "classic" {
		return BenchQueues{Type: want}
	}
	q := clustertest.QueueLeader(tb, brokertest.Management(tb), queue)
	if q.Type != want {
		tb.Fatalf("benchmark queue %s is %q, want %q", queue, q.Type, want)
	}
	return BenchQueues{Type: q.Type, Members: len(q.Members), Online: len(q.Online), Leader: q.Leader}
}

// Name is a figures line's name for these queues: name(params…) as
// before on classic queues; on quorum queues the queue type and its
// replicas lead the parameters, and a queue replicated on several nodes
// adds the prefix "cluster-":
//
//	replay-vs-shovel                    classic
//	cluster-replay-vs-shovel(quorum ×3) quorum, 3 replicas
//	daemon-happy-vs-raw-consume-ack(quorum ×1, prefetch 500, concurrency 16)
//
// $PARKINGLOT_BENCH_CORES (set by make bench-split: how the cores are
// shared between the broker and the benchmark) is the last parameter.
func (q BenchQueues) Name(name string, params ...string) string {
	if cores := os.Getenv("PARKINGLOT_BENCH_CORES"); cores != "" {
		params = append(params, cores)
	}
	if q.Type == "quorum" {
		params = append([]string{fmt.Sprintf("quorum ×%d", q.Members)}, params...)
		if q.Members > 1 {
			name = "cluster-" + name
		}
	}
	if len(params) == 0 {
		return name
	}
	return name + "(" + strings.Join(params, ", ") + ")"
}

// Note prints, for quorum queues, where the queue lives (a BenchNote
// under the benchmark's lines): replicas, those online, the leader and the
// node the benchmark's AMQP connections go to. It prints nothing for
// classic queues.
func (q BenchQueues) Note(what string) {
	if q.Type != "quorum" {
		return
	}
	BenchNote("%s on quorum queues, %d replicas (%d online), leader %s; clients connect to %s",
		what, q.Members, q.Online, q.Leader, broker.Redact(brokertest.URL()))
}

// Returned waits until queue's ready count has not changed for settle
// (bounded by a minute), empties it and returns how many messages it held.
// It is for quorum queues after a round that acked every delivery and
// closed its channel: measured on the 4.3.6 cluster of `make cluster`, a
// raw amqp091-go consume + ack of 2,000 messages that closed its channel
// right after the last ack found 63 of them back in the queue (delivered
// again, Redelivered set, to the next consumer), and none when it waited
// 1 s before closing — the acks still on their way when the channel
// closed did not take effect, and RabbitMQ returned those deliveries
// (at least once: a redelivery, never a loss). The benchmarks count them
// in a note and start the next round from an empty queue.
func Returned(tb testing.TB, ch *amqp.Channel, queue string, settle time.Duration) int {
	tb.Helper()
	last, since := -1, time.Now()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			tb.Fatalf("inspect %s: %v", queue, err)
		}
		if q.Messages != last {
			last, since = q.Messages, time.Now()
		} else if time.Since(since) >= settle {
			break
		}
	}
	n, err := ch.QueuePurge(queue, false)
	if err != nil {
		tb.Fatalf("purge %s: %v", queue, err)
	}
	return n
}
