package replay

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// DefaultSearchKeep is how many matches a search keeps for its caller
// (the TUI's results screen) when SearchOptions.Keep is 0; OnMatch sees
// every match, and the rest are counted.
const DefaultSearchKeep = 1000

// Query is what a search looks for: a --filter expression, or a plain
// text matched case-insensitively against the id, the error and the body.
type Query struct {
	Filter string // the expression run on each message
	Text   string // set when the query is a plain text
}

// ParseQuery reads a search's argument: a boolean --filter expression is
// used as one; anything else ("4711", "ledger timeout", "pay-17") is a
// plain text.
func ParseQuery(s string) Query {
	if _, err := CompileFilter(s); err == nil && strings.TrimSpace(s) != "" {
		return Query{Filter: s}
	}
	return TextQuery(s)
}

// TextQuery matches t, ignoring case, in the id, the error or the body as
// text (decompressed, MessagePack as JSON).
func TextQuery(t string) Query {
	q := strconv.Quote(strings.ToLower(t))
	return Query{Text: t, Filter: "lower(id) contains " + q + " || lower(error) contains " + q + " || lower(body_text) contains " + q}
}

// SearchOptions say where a search looks and what it hands back.
type SearchOptions struct {
	// Queues to search; empty: every parking lot Queues marks.
	Queues []string
	Query  Query
	// Keep bounds SearchResult.Matches (0: DefaultSearchKeep; below 0:
	// none kept, for a caller that takes each from OnMatch); the matches
	// past it are counted, not kept.
	Keep int
	// OnQueue is called as the search of a queue begins, and OnMatch for
	// every match, as it is found.
	OnQueue func(queue string)
	OnMatch func(queue string, s Summary)
	// Skip are queues not to read now (another action's pass works on
	// them: the messages a search held would be missing from it); each is
	// reported with ErrSearchSkipped.
	Skip []string
}

// ErrSearchSkipped: the queue was not searched because SearchOptions.Skip
// named it; the search is not incomplete for it.
var ErrSearchSkipped = errors.New("another action works on it")

// SearchMatch is one message found, and where it lives.
type SearchMatch struct {
	Queue   string  `json:"queue"`
	Summary Summary `json:"summary"`
}

// QueueSearch is what the search of one queue saw.
type QueueSearch struct {
	Queue   string `json:"queue"`
	Scanned int    `json:"scanned"`
	Matched int    `json:"matched"`
	Err     error  `json:"-"`
}

// SearchResult is a whole search: per queue, and the matches kept.
type SearchResult struct {
	Queues  []QueueSearch
	Matches []SearchMatch
	Matched int // every match, kept or not
}

// ErrSearchIncomplete: some queue could not be searched; its QueueSearch
// holds why. The others were.
var ErrSearchIncomplete = errors.New("some queues could not be searched")

// Search browses each queue in turn, harmlessly (every message given back,
// quorum delivery limits kept), and reports the messages Query matches as
// it finds them. Memory holds at most Keep matches, whatever the queues
// hold. A queue that cannot be read does not stop the others.
func (s *Session) Search(ctx context.Context, o SearchOptions) (*SearchResult, error) {
	if _, err := CompileFilter(o.Query.Filter); err != nil {
		return nil, err
	}
	queues := o.Queues
	if len(queues) == 0 {
		rows, err := s.Queues(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.ParkingLot {
				queues = append(queues, r.Name)
			}
		}
	}
	keep := o.Keep
	switch {
	case keep == 0:
		keep = DefaultSearchKeep
	case keep < 0:
		keep = 0
	}
	res := &SearchResult{}
	var failed bool
	for _, q := range queues {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if slices.Contains(o.Skip, q) {
			res.Queues = append(res.Queues, QueueSearch{Queue: q, Err: ErrSearchSkipped})
			continue
		}
		if o.OnQueue != nil {
			o.OnQueue(q)
		}
		qs := QueueSearch{Queue: q}
		b, err := s.Browse(ctx, BrowseOptions{Queue: q, Filter: o.Query.Filter, StreamOnly: true,
			OnBatch: func(batch []Summary) {
				for _, sum := range batch {
					qs.Matched++
					res.Matched++
					if len(res.Matches) < keep {
						res.Matches = append(res.Matches, SearchMatch{Queue: q, Summary: sum})
					}
					if o.OnMatch != nil {
						o.OnMatch(q, sum)
					}
				}
			}})
		if b != nil {
			qs.Scanned = b.Report.Seen
		}
		if err != nil {
			if ctx.Err() != nil {
				res.Queues = append(res.Queues, qs)
				return res, err
			}
			qs.Err, failed = err, true
		}
		res.Queues = append(res.Queues, qs)
	}
	if failed {
		return res, ErrSearchIncomplete
	}
	return res, nil
}
