package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Route is where a publish to an exchange with a routing key would land, as
// the bindings the management API reports say.
type Route struct {
	Exchange     string
	ExchangeType string
	RoutingKey   string
	Queues       []string // sorted, every queue reached; empty: unroutable
	// Via lists exchanges passed through (exchange-to-exchange bindings and
	// alternate exchanges), for display.
	Via []string
	// CC lists the routing keys of the message's CC and BCC headers, which
	// RabbitMQ routes the message with too (sender-selected distribution);
	// CCQueues are the queues only those keys reach (also in Queues).
	CC       []string
	CCQueues []string
}

// Unroutable reports whether no queue would receive the message.
func (r Route) Unroutable() bool { return len(r.Queues) == 0 }

// maxHops bounds exchange-to-exchange recursion (cycles are legal).
const maxHops = 8

// CCKeys returns the routing keys of a message's CC and BCC headers, in
// that order, without repeats. RabbitMQ routes a message with each of them
// besides its routing key when the header is an array of strings
// ("Sender-selected Distribution" in RabbitMQ's documentation); entries of
// another type (a byte array too) are not routing keys and are passed over,
// as RabbitMQ does.
func CCKeys(headers amqp.Table) []string {
	var keys []string
	seen := map[string]bool{}
	for _, h := range []string{"CC", "BCC"} {
		arr, ok := headers[h].([]any)
		if !ok {
			continue
		}
		for _, v := range arr {
			k, ok := v.(string) // a longstr; RabbitMQ passes over byte arrays
			if !ok {
				continue
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// PreviewRoute works out which queues a message published to exchange with
// routingKey and headers would reach, its CC and BCC headers' routing keys
// included. A missing exchange is ErrNotFound.
func (m *Management) PreviewRoute(ctx context.Context, exchange, routingKey string, headers amqp.Table) (Route, error) {
	r := Route{Exchange: exchange, RoutingKey: routingKey, CC: CCKeys(headers)}
	var walk func(ex, key string, hop int, seen, queues map[string]bool) error
	walk = func(ex, key string, hop int, seen, queues map[string]bool) error {
		if hop > maxHops || seen[ex] {
			return nil
		}
		seen[ex] = true
		if ex == "" { // the default exchange routes to the queue named by the key
			if hop == 0 {
				r.ExchangeType = "direct (default exchange)"
			}
			if _, err := m.Queue(ctx, key); err == nil {
				queues[key] = true
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
			return nil
		}
		info, err := m.Exchange(ctx, ex)
		if err != nil {
			return err
		}
		if hop == 0 {
			r.ExchangeType = info.Type
		} else if !slices.Contains(r.Via, ex) {
			r.Via = append(r.Via, ex)
		}
		bindings, err := m.Bindings(ctx, ex)
		if err != nil {
			return err
		}
		matched := false
		for _, b := range bindings {
			if !bindingMatches(info.Type, b, key, headers) {
				continue
			}
			matched = true
			if b.DestinationType == "exchange" {
				if err := walk(b.Destination, key, hop+1, seen, queues); err != nil {
					return err
				}
				continue
			}
			queues[b.Destination] = true
		}
		if !matched {
			if ae, ok := info.Arguments["alternate-exchange"].(string); ok && ae != "" {
				return walk(ae, key, hop+1, seen, queues)
			}
		}
		return nil
	}
	queues := map[string]bool{}
	if err := walk(exchange, routingKey, 0, map[string]bool{}, queues); err != nil {
		return r, fmt.Errorf("route preview %s: %w", Destination(exchange, routingKey), err)
	}
	byCC := map[string]bool{}
	for _, k := range r.CC {
		if err := walk(exchange, k, 0, map[string]bool{}, byCC); err != nil {
			return r, fmt.Errorf("route preview %s (CC %q): %w", Destination(exchange, routingKey), k, err)
		}
	}
	for q := range byCC {
		if !queues[q] {
			r.CCQueues = append(r.CCQueues, q)
			queues[q] = true
		}
	}
	for q := range queues {
		r.Queues = append(r.Queues, q)
	}
	sort.Strings(r.Queues)
	sort.Strings(r.CCQueues)
	return r, nil
}

// Destination formats exchange/routing key for messages.
func Destination(exchange, routingKey string) string {
	if exchange == "" {
		exchange = "(default exchange)"
	}
	return exchange + " / " + routingKey
}

func bindingMatches(exType string, b Binding, key string, headers amqp.Table) bool {
	switch exType {
	case "fanout":
		return true
	case "topic":
		return TopicMatch(b.RoutingKey, key)
	case "headers":
		return headersMatch(b.Arguments, headers)
	default: // direct and plugin exchanges that route by key
		return b.RoutingKey == key
	}
}

// TopicMatch reports whether a topic binding pattern ("*" one word, "#"
// zero or more) matches a routing key. As in RabbitMQ, the empty key has no
// words (so "*" does not match it; measured on 3.10.8), and matching takes
// time proportional to words × pattern words however many "#" there are.
func TopicMatch(pattern, key string) bool {
	p, k := topicSplit(pattern), topicSplit(key)
	// m[j] reports whether p[:i] matches k[:j], row by row over i.
	m := make([]bool, len(k)+1)
	m[0] = true
	for _, w := range p {
		next := make([]bool, len(k)+1)
		for j := 0; j <= len(k); j++ {
			switch {
			case w == "#":
				next[j] = m[j] || (j > 0 && next[j-1])
			case j == 0:
			case w == "*" || w == k[j-1]:
				next[j] = m[j-1]
			}
		}
		m = next
	}
	return m[len(k)]
}

func topicSplit(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

func headersMatch(args, headers amqp.Table) bool {
	mode, _ := args["x-match"].(string)
	anyMode := strings.HasPrefix(mode, "any")
	matchedOne := false
	for k, want := range args {
		if strings.HasPrefix(k, "x-") {
			continue
		}
		got, ok := headers[k]
		if ok && fmt.Sprint(got) == fmt.Sprint(want) {
			matchedOne = true
			if anyMode {
				return true
			}
			continue
		}
		if !anyMode {
			return false
		}
	}
	return !anyMode || matchedOne
}
