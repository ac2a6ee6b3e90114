//go:build integration

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestQueuesArrivalsAndDepthMatchTheWatch: for a parking lot that clients
// publish into, `queues -o json` tells the same depth as the watch's
// parkinglot_parked_messages and, the queue being younger than an hour,
// the same arrivals in the last hour as its parkinglot_parked_arrivals_total;
// for a parking lot filled by dead-lettering alone the broker counts no
// arrivals, and neither does the watch export any nor queues tell any.
func TestQueuesArrivalsAndDepthMatchTheWatch(t *testing.T) {
	vurl, ch := brokertest.VhostChannel(t) // queues reads every parking lot of the vhost
	published, deadLettered := brokertest.Name(t, "pub.dlq"), brokertest.Name(t, "dl.dlq")
	source := brokertest.Name(t, "source")
	for _, q := range []string{published, deadLettered} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.QueueDeclare(source, true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": deadLettered, "x-message-ttl": int32(1)}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		brokertest.Publish(t, ch, "", published, amqp.Publishing{MessageId: fmt.Sprintf("p-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": "ledger down 503"}})
	}
	for i := range 2 {
		brokertest.Publish(t, ch, "", source, amqp.Publishing{MessageId: fmt.Sprintf("d-%d", i), Body: []byte(`{}`)})
	}

	c := clitest.NewCLI(t, "PARKINGLOT_URL="+vurl)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	port := brokertest.FreePort(t)
	w := c.Command(ctx, "watch", published, deadLettered, "--no-discover", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--interval", "1s")
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = w.Wait() })
	metric := func(text, name, queue string) (float64, bool) {
		m := regexp.MustCompile(name + `\{queue="` + regexp.QuoteMeta(queue) + `",vhost="[^"]*"\} (\S+)`).FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		f, err := strconv.ParseFloat(m[1], 64)
		return f, err == nil
	}
	var exported string
	brokertest.Eventually(t, 60*time.Second, 250*time.Millisecond, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		exported = string(b)
		arrivals, ok := metric(exported, "parkinglot_parked_arrivals_total", published)
		d1, _ := metric(exported, "parkinglot_parked_messages", published)
		d2, _ := metric(exported, "parkinglot_parked_messages", deadLettered)
		return ok && arrivals == 3 && d1 == 3 && d2 == 2
	}, func() string { return "the watch never exported 3 arrivals and the depths 3 and 2:\n" + exported })
	if _, ok := metric(exported, "parkinglot_parked_arrivals_total", deadLettered); ok {
		t.Errorf("the watch exports arrivals for %s, which only the broker's dead-lettering filled:\n%s", deadLettered, exported)
	}

	r := c.Run("", "queues", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("queues: exit %d %s", r.Code, r.Stderr)
	}
	type row struct {
		Name       string `json:"name"`
		ParkingLot bool   `json:"parking_lot"`
		Messages   int64  `json:"messages"`
		LastHour   *int64 `json:"arrivals_last_hour"`
	}
	rows := map[string]row{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var x row
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		rows[x.Name] = x
		order = append(order, x.Name)
	}
	pub, dl := rows[published], rows[deadLettered]
	n := func(p *int64) string {
		if p == nil {
			return "none"
		}
		return strconv.FormatInt(*p, 10)
	}
	if !pub.ParkingLot || pub.Messages != 3 || pub.LastHour == nil || *pub.LastHour != 3 {
		t.Errorf("queues says of %s: %+v (arrivals %s); the watch exports depth 3 and 3 arrivals", published, pub, n(pub.LastHour))
	}
	if !dl.ParkingLot || dl.Messages != 2 || dl.LastHour != nil {
		t.Errorf("queues says of %s: %+v (arrivals %s); want depth 2 and no arrivals", deadLettered, dl, n(dl.LastHour))
	}
	if len(order) < 2 || order[0] != published && order[0] != deadLettered || rows[order[len(order)-1]].ParkingLot && len(order) > 2 {
		t.Errorf("parking lots are not listed first: %v", order)
	}
	r = c.Run("", "queues")
	if r.Code != 0 || !strings.Contains(r.Stdout, "NEW 1H") {
		t.Fatalf("queues text: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 8 && f[1] == published && f[8] != "3":
			t.Errorf("NEW 1H of %s is %s, want 3:\n%s", published, f[8], r.Stdout)
		case len(f) > 8 && f[1] == deadLettered && f[8] != "-":
			t.Errorf("NEW 1H of %s is %s, want -:\n%s", deadLettered, f[8], r.Stdout)
		}
	}
}
