//go:build integration

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
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

// TestQueuesShowsWhatTheWatchExports: for a parking lot, `queues --scan -o
// json` tells the same oldest age and top error group as `parkinglot
// watch` exports for it, and the text table lists it first among the
// parking lots that are younger.
func TestQueuesShowsWhatTheWatchExports(t *testing.T) {
	// a vhost of its own: queues --scan browses every parking lot of its
	// vhost, and must not hold other tests' messages
	vurl, ch := brokertest.VhostChannel(t)
	lot := brokertest.Name(t, "dlq")
	if _, err := ch.QueueDeclare(lot, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	parked := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
	for i, e := range []string{"ledger down 503", "ledger down 502", "bad amount -3"} {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": e, "x-parked-at": parked}})
	}
	c := clitest.NewCLI(t, "PARKINGLOT_URL="+vurl)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	port := brokertest.FreePort(t)
	w := c.Command(ctx, "watch", lot, "--no-discover", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--interval", "1s", "--scan-interval", "1s")
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = w.Wait() })
	metrics := func() string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	groupLine := regexp.MustCompile(`parkinglot_parked_messages_by_error\{error_group="([^"]*)",queue="` + regexp.QuoteMeta(lot) + `",vhost="[^"]*"\} (\d+)`)
	ageLine := regexp.MustCompile(`parkinglot_oldest_parked_age_seconds\{queue="` + regexp.QuoteMeta(lot) + `",vhost="[^"]*"\} (\S+)`)
	var exported string
	brokertest.Eventually(t, 60*time.Second, 200*time.Millisecond, func() bool {
		exported = metrics()
		return groupLine.MatchString(exported) && ageLine.MatchString(exported)
	}, func() string { return "the watch never exported the parking lot's groups and age:\n" + exported })
	top, topCount := "", 0
	for _, m := range groupLine.FindAllStringSubmatch(exported, -1) {
		if n, _ := strconv.Atoi(m[2]); n > topCount && m[1] != "other" {
			top, topCount = m[1], n
		}
	}
	watchAge, _ := strconv.ParseFloat(ageLine.FindStringSubmatch(exported)[1], 64)

	r := c.Run("", "queues", "--scan", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("queues: exit %d %s", r.Code, r.Stderr)
	}
	var row struct {
		Name          string   `json:"name"`
		ParkingLot    bool     `json:"parking_lot"`
		Oldest        *float64 `json:"oldest_age_seconds"`
		TopErrorGroup string   `json:"top_error_group"`
		TopErrorCount int      `json:"top_error_count"`
	}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.Name == lot {
			break
		}
	}
	if row.Name != lot || !row.ParkingLot || row.Oldest == nil {
		t.Fatalf("queues -o json has no parking lot row with an age for %s: %+v", lot, row)
	}
	if row.TopErrorGroup != top || row.TopErrorCount != topCount || top != "ledger down <n>" || topCount != 2 {
		t.Errorf("top error: queues says %q × %d, the watch %q × %d", row.TopErrorGroup, row.TopErrorCount, top, topCount)
	}
	if math.Abs(*row.Oldest-watchAge) > 10 || math.Abs(watchAge-90*60) > 10 {
		t.Errorf("oldest age: queues says %.0f s, the watch %.0f s, parked 5400 s ago", *row.Oldest, watchAge)
	}
	r = c.Run("", "queues", "--scan")
	if r.Code != 0 || !strings.Contains(r.Stdout, "OLDEST") || !strings.Contains(r.Stdout, "2 × ledger down <n>") || !strings.Contains(r.Stdout, "1h30m") {
		t.Errorf("queues text: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if q, err := ch.QueueDeclarePassive(lot, true, false, false, false, nil); err != nil || q.Messages != 3 {
		t.Errorf("the parking lot holds %d messages (%v), want the 3 it had", q.Messages, err)
	}
}
