package demo

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Kinds of demo message: what the built-in handler will make of them.
const (
	KindGood         = "good"          // acked at once
	KindFlakyThenOK  = "flaky-then-ok" // transient failures, then acked
	KindFlakyForever = "flaky-forever" // transient every time: parked after max_retries
	KindMalformed    = "malformed"     // not JSON: parked at once
	KindWrongType    = "wrong-type"    // a field of the wrong type: parked at once
	KindNegative     = "negative"      // a negative amount: parked at once
	KindCurrency     = "bad-currency"  // an unsupported currency: parked at once
	KindBinary       = "binary"        // not JSON at all: parked at once
)

// Message is one message the demo publishes.
type Message struct {
	ID          string
	Kind        string
	ContentType string
	Body        []byte
}

// Parks reports whether the handler ends up parking the message.
func (m Message) Parks() bool {
	return m.Kind != KindGood && m.Kind != KindFlakyThenOK
}

// Mix is the demo's realistic traffic: mostly good payments, some that a
// flaky bank gateway fails a time or two, some whose ledger never answers,
// and poison: malformed JSON, wrong types, negative amounts, unknown
// currencies and one binary body. The ids are fixed so every run looks the
// same.
func Mix() []Message {
	var out []Message
	n := 1000
	next := func() string { n++; return fmt.Sprintf("pay-%d", n) }
	add := func(kind, ct, id, body string) {
		out = append(out, Message{ID: id, Kind: kind, ContentType: ct, Body: []byte(body)})
	}
	banks := []string{"sparkasse", "ing", "triodos", "bunq"}
	currencies := []string{"EUR", "EUR", "USD", "GBP"}
	for i := 0; i < 20; i++ {
		id := next()
		add(KindGood, "application/json", id, paymentBody(id, fmt.Sprintf("%d.%02d", 10+i*7, i*3%100), currencies[i%4], banks[i%4]))
	}
	for i := 0; i < 8; i++ {
		id := next()
		add(KindFlakyThenOK, "application/json", id, paymentBody(id, fmt.Sprintf("%d.00", 25+i*5), "EUR", "n26"))
	}
	for i := 0; i < 4; i++ {
		id := next()
		add(KindFlakyForever, "application/json", id, paymentBody(id, fmt.Sprintf("%d.90", 300+i*40), "EUR", "ledger-legacy"))
	}
	for _, tail := range []string{`"amount":12.5,`, `"amount":`, `"amount":12.5}}`} {
		id := next()
		add(KindMalformed, "application/json", id, fmt.Sprintf(`{"id":%q,"account":"DE89370400440532013000",%s`, id, tail))
	}
	for _, fields := range []string{`"amount":"12,50","currency":"EUR"`, `"amount":"99.95 EUR","currency":"EUR"`, `"amount":12,"currency":978`} {
		id := next()
		add(KindWrongType, "application/json", id, fmt.Sprintf(`{"id":%q,"account":"NL91ABNA0417164300",%s,"bank":"ing"}`, id, fields))
	}
	for _, amount := range []string{"-250.00", "-13.37", "-1.00", "-4200.00"} {
		id := next()
		add(KindNegative, "application/json", id, paymentBody(id, amount, "EUR", "sparkasse"))
	}
	for _, cur := range []string{"XYZ", "BTC"} {
		id := next()
		add(KindCurrency, "application/json", id, paymentBody(id, "42.00", cur, "bunq"))
	}
	bin := make([]byte, 96)
	for i := range bin {
		bin[i] = byte(i*37 + 11)
	}
	out = append(out, Message{ID: next(), Kind: KindBinary, ContentType: "application/octet-stream", Body: bin})
	return out
}

func paymentBody(id, amount, currency, bank string) string {
	return fmt.Sprintf(`{"id":%q,"account":"DE89370400440532013000","amount":%s,"currency":%q,"bank":%q}`, id, amount, currency, bank)
}

// flakyFailures is how many times the gateway fails a flaky payment
// before it goes through: 1 or 2, fixed per id.
func flakyFailures(id string) int {
	h := sha256.Sum256([]byte(id))
	return 1 + int(binary.BigEndian.Uint16(h[:2])%2)
}

// ref is a stable fake id ("request 3f2a…") so error texts vary per message
// the way real ones do, while group-by-error still folds them.
func ref(id string, attempt int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", id, attempt)))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
