//go:build integration

package cli_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestSearchAcrossParkingLots: a search over three parking lots, classic
// and quorum, finds the planted messages (by id, by error, by body) and
// nothing else, and leaves every queue as it was: the same messages in the
// same order.
func TestSearchAcrossParkingLots(t *testing.T) {
	ch := brokertest.Channel(t)
	token := strings.TrimPrefix(brokertest.Name(t, ""), "pltest.") // unique to this run
	token = token[strings.LastIndex(token, ".")+1:]
	lots := map[string]string{}
	for _, kind := range []string{"classic", "quorum", "classic-2"} {
		q := brokertest.Name(t, kind+".dlq")
		args := amqp.Table{}
		if kind == "quorum" {
			args["x-queue-type"] = "quorum"
		}
		brokertest.DeclareQueue(t, ch, q, args)
		lots[kind] = q
	}
	plant := func(q, id, errText, body string) {
		brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: id, Body: []byte(body), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-last-error": errText}})
	}
	for i := range 20 {
		for _, q := range lots {
			plant(q, fmt.Sprintf("other-%02d", i), "timeout", `{"order":1}`)
		}
	}
	plant(lots["classic"], "order-"+token, "ledger down", `{}`)
	plant(lots["quorum"], "q-1", "order "+strings.ToUpper(token)+" refused", `{}`)
	plant(lots["classic-2"], "c-1", "timeout", `{"ref":"`+token+`"}`)
	for _, q := range lots {
		brokertest.WaitDepth(t, q, 21, 30*time.Second)
	}
	c := clitest.NewCLI(t)
	order := func(q string) []string {
		t.Helper()
		r := c.Run("", "list", q, "-o", "json")
		if r.Code != 0 {
			t.Fatalf("list %s: exit %d %s", q, r.Code, r.Stderr)
		}
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			var s struct{ ID string }
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		return ids
	}
	before := map[string][]string{}
	for _, q := range lots {
		before[q] = order(q)
	}

	r := c.Run("", "-o", "json", "search", token, lots["classic"], lots["quorum"], lots["classic-2"])
	if r.Code != 0 {
		t.Fatalf("search: exit %d\n%s", r.Code, r.Stderr)
	}
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var m struct {
			Queue   string `json:"queue"`
			Summary struct {
				ID string `json:"id"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		found = append(found, m.Queue+" "+m.Summary.ID)
	}
	want := []string{lots["classic"] + " order-" + token, lots["quorum"] + " q-1", lots["classic-2"] + " c-1"}
	if !slices.Equal(found, want) {
		t.Errorf("search found %q, want %q (queue by queue, in the order named)", found, want)
	}

	// an expression, in text output, over the same queues
	r = c.Run("", "search", `error contains "ledger"`, lots["classic"], lots["quorum"])
	if r.Code != 0 || !strings.Contains(r.Stdout, "order-"+token) || strings.Count(r.Stdout, "\n") != 2 ||
		!strings.Contains(r.Stderr, "1 match(es) in 1 of 2 queue(s); 42 message(s) looked at") {
		t.Errorf("expression search: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	for _, q := range lots {
		if after := order(q); !slices.Equal(after, before[q]) {
			t.Errorf("%s changed: before %v\nafter %v", q, before[q], after)
		}
	}
}
