package broker

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

type amqpBlocking = amqp.Blocking

// Backoff is a capped exponential backoff with full jitter.
type Backoff struct {
	Initial time.Duration // first delay ceiling; default 100ms
	Max     time.Duration // cap; default 30s
}

// Delay returns the wait before retry number attempt (0-based): a random
// duration in [0, min(Max, Initial·2^attempt)], so that many clients cut off
// together do not reconnect in lockstep.
func (b Backoff) Delay(attempt int) time.Duration {
	initial, ceiling := b.Initial, b.Max
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 30 * time.Second
	}
	d := initial
	for i := 0; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	if d > ceiling {
		d = ceiling
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// Permanent reports whether a dial error will not go away by retrying
// (a bad URL, refused credentials or vhost, unreadable TLS files).
func Permanent(err error) bool {
	return errors.Is(err, ErrBadURL) || errors.Is(err, ErrAccessRefused) || errors.Is(err, errTLSFiles)
}

// Redial dials until it succeeds, the context ends or the error is
// permanent, waiting b.Delay between tries.
func Redial(ctx context.Context, opts Options, b Backoff) (*Conn, error) {
	for attempt := 0; ; attempt++ {
		c, err := Dial(ctx, opts)
		if err == nil {
			return c, nil
		}
		if Permanent(err) || ctx.Err() != nil {
			return nil, err
		}
		wait := b.Delay(attempt)
		if opts.Logger != nil {
			opts.Logger.Warn("broker unreachable, retrying", "url", Redact(opts.URL), "attempt", attempt+1, "in", wait.Round(time.Millisecond), "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// WatchBlocked logs connection.blocked / unblocked (a broker resource alarm
// stops publishers) until the connection closes.
func (c *Conn) WatchBlocked(logger *slog.Logger, onChange func(blocked bool, reason string)) {
	ch := c.NotifyBlocked(make(chan amqpBlocking, 4))
	go func() {
		for b := range ch {
			if logger != nil {
				if b.Active {
					logger.Warn("broker blocked this connection (resource alarm)", "reason", b.Reason, "url", c.URL)
				} else {
					logger.Info("broker unblocked this connection", "url", c.URL)
				}
			}
			if onChange != nil {
				onChange(b.Active, b.Reason)
			}
		}
	}()
}
