package retrycore

import (
	"sort"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Sources of the facts read from frameworks' own headers, as Facts and
// Origin name them.
const (
	// SourceRascalError is the error text's source for rascal's nested
	// rascal.error.message.
	SourceRascalError = "rascal.error.message"
	// SourceRascal is the origin's source for rascal's
	// rascal.originalExchange / originalRoutingKey.
	SourceRascal = "rascal originalExchange/originalRoutingKey"
)

// HeaderRascal is the one table header rascal keeps its recovery state in:
// originalExchange, originalRoutingKey, originalQueue, error.message,
// error.code, recovery.<queue>.republished / forwarded, redeliveries.
const HeaderRascal = "rascal"

// rascalValue reads a value inside rascal's table header by its path of
// keys (each key whole: queue names in recovery contain dots).
func rascalValue(h amqp.Table, path ...string) any {
	t, ok := asTable(h[HeaderRascal])
	if !ok {
		return nil
	}
	for i, k := range path {
		v, present := t[k]
		if !present {
			return nil
		}
		if i == len(path)-1 {
			return v
		}
		if t, ok = asTable(v); !ok {
			return nil
		}
	}
	return nil
}

// rascalRecovery returns rascal's recovery counter (republished or
// forwarded) for queue, or when queue is empty or has no entry, the
// largest over the queues it names, with the queue it belongs to.
func rascalRecovery(h amqp.Table, queue, counter string) (int64, string, bool) {
	rec, ok := asTable(rascalValue(h, "recovery"))
	if !ok {
		return 0, "", false
	}
	if e, ok := asTable(rec[queue]); ok && queue != "" {
		if n, ok := asInt(e[counter]); ok && n >= 0 {
			return n, queue, true
		}
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable answer whatever the map order
	var best int64 = -1
	var bestQ string
	for _, k := range keys {
		if e, ok := asTable(rec[k]); ok {
			if n, ok := asInt(e[counter]); ok && n > best {
				best, bestQ = n, k
			}
		}
	}
	return best, bestQ, best >= 0
}

// isCelery reports whether the headers are Celery's task protocol 2: a
// task name in "task" and the task id in "id".
func isCelery(h amqp.Table) bool {
	s, ok := asString(h["task"])
	return ok && s != ""
}
