package retrycore

import (
	"fmt"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Death is one entry of RabbitMQ's x-death header: the broker dead-lettered
// the message Count times from Queue for Reason.
type Death struct {
	Queue              string    `json:"queue"`
	Reason             string    `json:"reason"` // rejected | expired | maxlen | delivery_limit
	Count              int64     `json:"count"`
	Exchange           string    `json:"exchange"`
	RoutingKeys        []string  `json:"routing_keys,omitempty"`
	Time               time.Time `json:"time,omitzero"`
	OriginalExpiration string    `json:"original_expiration,omitempty"`
}

// DeathRef is what x-first-death-* or x-last-death-* say.
type DeathRef struct {
	Queue    string `json:"queue,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Exchange string `json:"exchange,omitempty"`
}

func (r DeathRef) empty() bool { return r == DeathRef{} }

// maxDeaths bounds how many x-death entries are decoded; a message that was
// dead-lettered through more distinct queues is not worth more memory.
const maxDeaths = 256

// Deaths decodes x-death newest first, the one order every view shows.
// RabbitMQ puts the entry it last updated at the
// head, and that head is kept whatever the times say: an entry's time is
// its first death, so an entry that died again (count > 1) may be the
// newest with an older time, and the attempts and the parked time are read
// from it. The rest is not always in order: an array a consumer carried
// through its republishes came back from 3.10.8, for a message retried
// through three delay tiers, as tier 3, tier 1, tier 2 (00:10:07, 00:04:37,
// 00:05:07). So the entries after the head are sorted by time, newest
// first, when each has one; the sort is stable, so entries of one second
// keep the broker's order. It never fails: entries of the wrong shape are
// skipped, fields of the wrong type are left empty, and a single table
// where an array belongs is read as a one-entry array. The second value
// lists what was odd, for display.
func Deaths(h amqp.Table) ([]Death, []string) {
	raw, ok := h[HeaderDeath]
	if !ok || raw == nil {
		return nil, nil
	}
	var problems []string
	var entries []any
	switch v := raw.(type) {
	case []any:
		entries = v
	case amqp.Table, map[string]any:
		entries = []any{v}
		problems = append(problems, "x-death is a table, not an array of tables")
	default:
		return nil, []string{fmt.Sprintf("x-death is a %T, not an array of tables", raw)}
	}
	if len(entries) > maxDeaths {
		problems = append(problems, fmt.Sprintf("x-death has %d entries; showing the newest %d", len(entries), maxDeaths))
		entries = entries[:maxDeaths]
	}
	deaths := make([]Death, 0, len(entries))
	for i, e := range entries {
		t, ok := asTable(e)
		if !ok {
			problems = append(problems, fmt.Sprintf("x-death entry %d is a %T, not a table", i, e))
			continue
		}
		d := Death{
			Queue:              headerString(t, "queue"),
			Reason:             headerString(t, "reason"),
			Exchange:           headerString(t, "exchange"),
			OriginalExpiration: headerString(t, "original-expiration"),
		}
		if n, ok := asInt(t["count"]); ok {
			d.Count = n
		} else if c, present := t["count"]; present {
			problems = append(problems, fmt.Sprintf("x-death entry %d: count is a %T", i, c))
		}
		d.Time, _ = asTime(t["time"])
		switch rks := t["routing-keys"].(type) {
		case []any:
			for _, rk := range rks {
				if s, ok := asString(rk); ok {
					d.RoutingKeys = append(d.RoutingKeys, s)
				}
			}
		case string:
			d.RoutingKeys = []string{rks}
		}
		deaths = append(deaths, d)
	}
	newestFirst(deaths)
	return deaths, problems
}

// newestFirst keeps the head (the entry the broker updated last) and sorts
// the rest by time, newest first, when every one of them has a time; equal
// times keep their order. Without a time there is nothing to sort by: the
// broker's order stands.
func newestFirst(deaths []Death) {
	if len(deaths) < 3 {
		return
	}
	rest := deaths[1:]
	for _, d := range rest {
		if d.Time.IsZero() {
			return
		}
	}
	slices.SortStableFunc(rest, func(a, b Death) int { return b.Time.Compare(a.Time) })
}

func asTable(v any) (amqp.Table, bool) {
	switch t := v.(type) {
	case amqp.Table:
		return t, true
	case map[string]any:
		return amqp.Table(t), true
	}
	return nil, false
}

func deathRef(h amqp.Table, queue, reason, exchange string) DeathRef {
	return DeathRef{Queue: headerString(h, queue), Reason: headerString(h, reason), Exchange: headerString(h, exchange)}
}

// findDeath returns the newest entry (Deaths' order) for queue (and reason, when given).
func findDeath(deaths []Death, queue, reason string) (Death, bool) {
	for _, d := range deaths {
		if d.Queue == queue && (reason == "" || d.Reason == reason) {
			return d, true
		}
	}
	return Death{}, false
}
