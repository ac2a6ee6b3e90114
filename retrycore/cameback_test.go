package retrycore

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestDecodeCameBack: a parked message with a replay id came back after a
// replay; x-replayed-error tells whether it fails the same way (the same
// error group) as when it was replayed.
func TestDecodeCameBack(t *testing.T) {
	at := time.Unix(1714564800, 0)
	back := func(last, before any) amqp.Table {
		h := amqp.Table{HeaderReplayID: "r-1", HeaderReplayCount: int32(1), HeaderReplayedAt: at, HeaderLastError: last}
		if before != nil {
			h[HeaderReplayedError] = before
		}
		return h
	}
	cases := []struct {
		name string
		h    amqp.Table
		back bool
		same *bool
	}{
		{"never replayed", amqp.Table{HeaderLastError: "ledger down"}, false, nil},
		{"same group", back("transfer 42 not found", "transfer 7 not found"), true, boolPtr(true)},
		{"another error", back("timeout after 30s", "transfer 7 not found"), true, boolPtr(false)},
		{"replayed by an older parkinglot", back("timeout", nil), true, nil},
		{"a wrong type", back("timeout", int32(5)), true, nil},
		{"replayed error without a replay id", amqp.Table{HeaderReplayedError: "x", HeaderLastError: "x"}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Decode(c.h)
			if f.CameBack != c.back {
				t.Errorf("came back %v, want %v", f.CameBack, c.back)
			}
			if (f.SameError == nil) != (c.same == nil) || f.SameError != nil && *f.SameError != *c.same {
				t.Errorf("same error %v, want %v", sameText(f.SameError), sameText(c.same))
			}
			if c.back && (f.ReplayCount != 1 || !f.ReplayedAt.Equal(at) || f.ReplayID != "r-1") {
				t.Errorf("replay %d at %v id %q", f.ReplayCount, f.ReplayedAt, f.ReplayID)
			}
		})
	}
}

func boolPtr(b bool) *bool { return &b }

func sameText(b *bool) string {
	if b == nil {
		return "unknown"
	}
	if *b {
		return "same"
	}
	return "other"
}
