package retrycore

import (
	"fmt"
	"sort"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// ResetBudget gives a replayed copy a fresh retry budget in every
// convention parkinglot reads: it removes x-death,
// x-first-death-*, x-last-death-*, x-retry-count and x-delivery-count,
// rascal's recovery counters (rascal.recovery, and rascal.redeliveries set
// to 0), and sets Celery's retries to 0 (of the same integer type). h is the
// copy's own table and is changed in place; a nested table is replaced by an
// edited clone, never edited in place, so the message it was copied from
// keeps its values. It returns what it reset, in words, for the report.
func ResetBudget(h amqp.Table) (reset []string) {
	if h == nil {
		return nil
	}
	drop := func(k, name string) {
		if _, ok := h[k]; ok {
			delete(h, k)
			reset = append(reset, name)
		}
	}
	drop(HeaderDeath, HeaderDeath)
	for _, group := range []string{"x-first-death-", "x-last-death-"} {
		found := false
		for _, suffix := range []string{"queue", "reason", "exchange"} {
			if _, ok := h[group+suffix]; ok {
				delete(h, group+suffix)
				found = true
			}
		}
		if found {
			reset = append(reset, group+"*")
		}
	}
	drop(HeaderRetryCount, HeaderRetryCount)
	drop(HeaderDeliveryCount, HeaderDeliveryCount)
	drop(HeaderAcquiredCount, HeaderAcquiredCount)

	if r, ok := asTable(h[HeaderRascal]); ok {
		r = broker.CloneTable(r)
		changed := false
		if rec, ok := asTable(r["recovery"]); ok {
			keys := make([]string, 0, len(rec))
			for k := range rec {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, q := range keys {
				e, _ := asTable(rec[q])
				for _, c := range []string{"republished", "forwarded"} {
					if _, ok := e[c]; ok {
						reset = append(reset, fmt.Sprintf("rascal.recovery[%q].%s", q, c))
					}
				}
			}
			delete(r, "recovery")
			changed = true
		}
		if n, ok := asInt(r["redeliveries"]); ok && n != 0 {
			r["redeliveries"] = zeroLike(r["redeliveries"])
			reset = append(reset, "rascal.redeliveries")
			changed = true
		}
		if changed {
			h[HeaderRascal] = r
		}
	}
	if isCelery(h) {
		if n, ok := asInt(h["retries"]); ok && n != 0 {
			h["retries"] = zeroLike(h["retries"])
			reset = append(reset, "celery retries")
		}
	}
	return reset
}

// zeroLike is 0 of v's integer type, so a framework reading the header
// finds the type it wrote.
func zeroLike(v any) any {
	switch v.(type) {
	case int8:
		return int8(0)
	case uint8:
		return uint8(0)
	case int16:
		return int16(0)
	case uint16:
		return uint16(0)
	case int32:
		return int32(0)
	case uint32:
		return uint32(0)
	case int64:
		return int64(0)
	case int:
		return 0
	case string:
		return "0"
	}
	return int32(0)
}
