//go:build integration

package cli_test

import (
	"bufio"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// A message without a message_id has one id from its first handling to the
// parking lot: the id the daemon (the real binary, at its default log
// level) logs when it retries and parks a message is the id `show` finds
// it by. At info the daemon logs each retry, with the attempt and the tier,
// as well as the parking.
func TestDaemonLogsTheIDTheParkingLotLists(t *testing.T) {
	c := newCLI(t)
	p := writePipeline(t, 200*time.Millisecond)
	daemon := c.command("daemon", "-f", p.file, "--exec", handlerScript(t, "flaky.sh"))
	logs, err := daemon.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- daemon.Wait()
	}()
	t.Cleanup(func() { _ = daemon.Process.Kill() })
	var log []string
	wait := func(what string, done func() bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for !done() {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("daemon exited while waiting for %s: %v\n%s", what, <-exited, strings.Join(log, "\n"))
				}
				log = append(log, l)
			case <-timeout:
				t.Fatalf("no %s within 30s; daemon log:\n%s", what, strings.Join(log, "\n"))
			}
		}
	}
	count := func(msg string) int {
		n := 0
		for _, l := range log {
			if strings.Contains(l, "msg="+msg+" ") {
				n++
			}
		}
		return n
	}
	wait("consuming", func() bool { return count("consuming") > 0 })

	// Neither has a message_id; both carry a header of their own, which
	// counts in the id, beside those the way adds, which do not.
	ch := brokertest.Channel(t)
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, []amqp.Publishing{
		{ContentType: "text/plain", Headers: amqp.Table{"tenant": "acme"}, Body: []byte("poison pill, no id")},
		{ContentType: "text/plain", Headers: amqp.Table{"tenant": "acme"}, Body: []byte("please fail, no id")},
	})
	wait("two parkings", func() bool { return count("parked") == 2 })

	id := regexp.MustCompile(` id=(sha256:[0-9a-f]{12}) `)
	tier := regexp.MustCompile(` attempt=(\d) tier=(\S+) in=(\S+) `)
	var parked []string
	retried := map[string][]string{}
	for _, l := range log {
		m := id.FindStringSubmatch(l)
		switch {
		case strings.Contains(l, "msg=parked "):
			if m == nil {
				t.Fatalf("parked line without a content id: %s", l)
			}
			parked = append(parked, m[1])
		case strings.Contains(l, "msg=retrying "):
			tm := tier.FindStringSubmatch(l)
			if m == nil || tm == nil || !strings.Contains(l, "level=INFO") {
				t.Fatalf("retry line without id, attempt, tier and delay at info: %s", l)
			}
			retried[m[1]] = append(retried[m[1]], tm[1]+" "+tm[2]+" "+tm[3])
		}
	}
	tierQ := p.Tiers()[0].Queue
	if len(parked) != 2 || parked[0] == parked[1] || len(retried) != 1 {
		t.Fatalf("parked %v, retried %v; daemon log:\n%s", parked, retried, strings.Join(log, "\n"))
	}
	for rid, attempts := range retried {
		if want := "[1 " + tierQ + " 200ms 2 " + tierQ + " 200ms]"; strings.Join(attempts, " ") != strings.Trim(want, "[]") {
			t.Errorf("retries of %s logged as %v, want %s", rid, attempts, want)
		}
		if rid != parked[0] && rid != parked[1] {
			t.Errorf("retried as %s, parked as %v: the id changed on the way", rid, parked)
		}
	}

	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not exit after SIGTERM")
	}
	for _, pid := range parked {
		code, stdout, stderr := c.run("show", p.Error.Queue, pid)
		if code != 0 || !strings.Contains(stdout, pid) {
			t.Errorf("show %s %s: exit %d\n%s%s", p.Error.Queue, pid, code, stdout, stderr)
		}
	}
	code, stdout, stderr := c.run("list", p.Error.Queue, "-o", "json")
	for _, pid := range parked {
		if code != 0 || !strings.Contains(stdout, `"id":"`+pid+`"`) {
			t.Errorf("list does not list %s: exit %d\n%s%s", pid, code, stdout, stderr)
		}
	}
}
