// Package benchtest is the benchmark harness: it measures parkinglot's
// engines against raw baselines written with amqp091-go alone, in the same
// run and process. A benchmark alternates its measured run with its
// baselines in rounds, A B A B … ([Alternate]), seeding what each round
// consumes outside the timed part, and reports the median of each side
// and the median ratio of the pairs with its min–max spread ([BenchLine]).
// The raw baselines (a pipelined move, a consume and ack, a hold-all
// browse, the shovel plugin's move, a retry loop) live here too.
//
// # Benchmark method
//
// `make bench` runs every benchmark once (-benchtime 1x, one package at a
// time), each against its raw baseline measured in the same run and
// process. One pair of runs is not a stable ratio on a shared machine (the
// same replay measured 0.84 of the shovel on a quiet run and 0.54 on a busy
// one), so each benchmark alternates its measured run with its baselines,
// A B A B …, 3 rounds or $PARKINGLOT_BENCH_ROUNDS ([BenchRounds], [Alternate]), and every
// round seeds what it consumes outside the timed part. Each comparison
// prints one line with the medians and the median ratio of the pairs with
// its min–max, then a "(…)" line with every round's figures; `make bench`
// repeats them at the end with the machine, the broker version and the
// load. For budget lines (first page, RSS, frame time, keystrokes) the
// figure is the median over the rounds and the ratio is used ÷ budget.
//
// The measured runs and their baselines:
//
//   - replay-vs-raw-pipelined-move: Session.Replay of parked 1 KiB
//     persistent messages to their origin with every guarantee (mandatory,
//     confirm before ack, audit entry fsynced before ack), against
//     [RawPipelinedMove]: consume with prefetch 4,096 on one connection,
//     publish each message unchanged (not mandatory) with confirms on a
//     window of 2,048 on a second, ack the originals once confirmed.
//   - replay-vs-shovel: the same replay against the shovel plugin's move
//     (ack-mode on-confirm, src-delete-after queue-length, prefetch 1000:
//     the management UI's "Move messages"), until the source is empty and
//     the destination holds all.
//   - replay-vs-naive(2000): get → publish → wait for the confirm → ack.
//   - browse-scan-vs-raw-hold, browse-first-page, browse-peak-rss: a child
//     process runs the browse engine as the TUI does until every message is
//     given back, against a consume with no prefetch limit and no acks and
//     one nack(multiple, requeue); the child's VmHWM, never the benchmark
//     process's, which holds the baseline.
//   - tui-load-vs-raw-hold, tui-first-screen, tui-sort/group-keystroke
//     (terminal), tui-peak-rss: the real binary in a pseudo-terminal
//     (120×40), from launch to the first row, to "all given back", then s
//     and g over every row.
//   - daemon-happy-vs-raw-consume-ack: retrycore/daemon.Run with a no-op handler,
//     prefetch 500, concurrency 16, dial and declare included, against
//     consume + single ack at prefetch 500.
//   - daemon-retry-vs-raw-retry-loop: messages that fail once then succeed
//     (a copy through a 1 ms delay tier), counted when done, against the
//     same flow written with amqp091-go alone, its copies carrying the same
//     retry headers ([RawRetryLoop]); the one-header loop and a raw
//     confirmed publish are printed as information.
//   - tui-keypress-frame: Update + View of the message list with 100,000
//     rows, 2,000 frames a round.
//   - the 1M lines (PARKINGLOT_BENCH_BIG=1, count [BigBenchCount]): the
//     browse, the in-process list and the real binary on 1,000,000 parked
//     messages.
//
// $PARKINGLOT_BENCH_QUEUE_TYPE=quorum (make bench-cluster) makes every
// queue of the replay and daemon benchmarks a quorum queue, baselines
// included, and the lines are named after the type and the replicas. With
// $PARKINGLOT_BENCH_BROKER_PID set (make bench-split sets it), the "(…)"
// line gives the broker's CPU a message of each move.
//
// A figures line reads, for example:
//
//	replay-vs-shovel  100000  6896 msg/s  7253 msg/s  ratio=0.95 (0.88–1.01, 3 pairs)
//
// the count, the median rate of the measured run and of its baseline, and
// the median ratio of the pairs with its min–max. The variables:
// $PARKINGLOT_BENCH_N runs a smaller count ([BenchCount]);
// $PARKINGLOT_BENCH_ROUNDS more rounds; $PARKINGLOT_BENCH_BIG=1 adds the 1M
// lines ($PARKINGLOT_BENCH_BIG_N for another size); BENCH_BROKER=4.3 (or
// 4.0, system) picks the broker of make bench. make bench-cluster runs the
// replay and the daemon's happy path on quorum queues replicated over the
// three nodes of make cluster, the clients on node 1. make bench-split is
// the production shape, the broker on its own machine: every thread of the
// broker's VM is pinned to the first half of the cores with as many
// schedulers online, the benchmark to the other half
// ($PARKINGLOT_BENCH_CORES says so in the figures), and both are given back
// on exit.
//
// The shovel is the hard baseline: it moves messages inside the broker over
// direct connections, while every replayed message travels to a client and
// back, framed and parsed on the broker's sockets both ways. On 4.x that
// costs the broker's core more a message than the shovel's move (figures in
// the README's performance table), and with that core saturated no client
// reaches the shovel; on shared cores the client's own CPU also comes out
// of the broker's. So replay-vs-shovel is read beside the raw move's own
// ratio to the shovel and the broker's CPU a message, on its own cores
// (bench-split).
package benchtest
