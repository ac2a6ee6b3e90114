package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/retrycore/daemon"
)

// payment is what the demo's payment service expects.
type payment struct {
	ID       string  `json:"id"`
	Account  string  `json:"account"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Bank     string  `json:"bank"`
}

var currencies = map[string]bool{"EUR": true, "USD": true, "GBP": true}

// Handler is the demo's payment service: it validates each payment
// (poison is a permanent failure: parked at once) and "calls" a bank
// gateway that is sometimes slow (n26: a transient failure or two) or
// down (ledger-legacy: transient every time, so parked once the retries
// are used up). The error texts carry ids, as real ones do.
func Handler() daemon.Handler {
	return daemon.HandlerFunc(func(_ context.Context, d daemon.Delivery) error {
		if !strings.Contains(d.ContentType, "json") {
			return daemon.Permanent(fmt.Errorf("payment %s: cannot decode body: content type %q is not JSON", d.MessageID, d.ContentType))
		}
		var p payment
		if err := json.Unmarshal(d.Body, &p); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) { // a truncated body is one too
				return daemon.Permanent(fmt.Errorf("invalid JSON in payment %s: %v", d.MessageID, err))
			}
			return daemon.Permanent(fmt.Errorf("payment %s: %v", d.MessageID, err))
		}
		switch {
		case p.Amount <= 0:
			return daemon.Permanent(fmt.Errorf("payment %s: amount must be positive, got %.2f %s", p.ID, p.Amount, p.Currency))
		case !currencies[p.Currency]:
			return daemon.Permanent(fmt.Errorf("payment %s: unsupported currency %q", p.ID, p.Currency))
		}
		switch p.Bank {
		case "n26":
			if d.Attempt <= flakyFailures(p.ID) {
				return fmt.Errorf("bank gateway timeout after 3000 ms (n26, attempt %d)", d.Attempt)
			}
		case "ledger-legacy":
			return fmt.Errorf("upstream ledger unavailable: 503 Service Unavailable from ledger-legacy (request %s)", ref(p.ID, d.Attempt))
		}
		return nil
	})
}
