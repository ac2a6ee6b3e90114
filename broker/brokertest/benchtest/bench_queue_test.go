//go:build integration

package benchtest

import "testing"

// The figures lines keep their names on classic queues (the names the
// README's figures use), and say the queue type and replicas on quorum ones.
func TestBenchQueuesName(t *testing.T) {
	classic := BenchQueues{Type: "classic"}
	cluster := BenchQueues{Type: "quorum", Members: 3, Online: 3, Leader: "rabbitc1@localhost"}
	single := BenchQueues{Type: "quorum", Members: 1, Online: 1, Leader: "rabbit@localhost"}
	for _, c := range []struct {
		q      BenchQueues
		name   string
		params []string
		want   string
	}{
		{classic, "replay-vs-shovel", nil, "replay-vs-shovel"},
		{classic, "daemon-happy-vs-raw-consume-ack", []string{"prefetch 500", "concurrency 16"}, "daemon-happy-vs-raw-consume-ack(prefetch 500, concurrency 16)"},
		{classic, "replay-vs-naive", []string{"2000"}, "replay-vs-naive(2000)"},
		{cluster, "replay-vs-shovel", nil, "cluster-replay-vs-shovel(quorum ×3)"},
		{cluster, "daemon-happy-vs-raw-consume-ack", []string{"prefetch 500", "concurrency 16"}, "cluster-daemon-happy-vs-raw-consume-ack(quorum ×3, prefetch 500, concurrency 16)"},
		{single, "replay-vs-shovel", nil, "replay-vs-shovel(quorum ×1)"},
	} {
		if got := c.q.Name(c.name, c.params...); got != c.want {
			t.Errorf("%+v.Name(%q, %q) = %q, want %q", c.q, c.name, c.params, got, c.want)
		}
	}
}

func TestBenchQueueType(t *testing.T) {
	for env, want := range map[string]string{"": "classic", "classic": "classic", "quorum": "quorum"} {
		t.Setenv(BenchQueueTypeEnv, env)
		if got := BenchQueueType(t); got != want {
			t.Errorf("%s=%q: %q, want %q", BenchQueueTypeEnv, env, got, want)
		}
	}
	t.Setenv(BenchQueueTypeEnv, "quorum")
	if args := BenchQueueArgs(t, false); args["x-queue-type"] != "quorum" || len(args) != 1 {
		t.Errorf("quorum queue args %v", args)
	}
	t.Setenv(BenchQueueTypeEnv, "classic")
	if args := BenchQueueArgs(t, true); args != nil {
		t.Errorf("classic parking lot args %v, want none", args)
	}
}
