//go:build integration

package ui

import (
	"os"
	"os/exec"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIListShowsArrivals drives the real binary in tmux: with a parking
// lot's list open, a message a consumer rejects into the lot (through its
// dead-letter exchange) appears in the list marked +, counted as new; the
// lot keeps every message.
func TestTUIListShowsArrivals(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t)
	_, lot, work := brokertest.DLXLot(t, ch)
	park := func(id string) {
		brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: id, Body: []byte(`{}`), Headers: amqp.Table{"x-last-error": "ledger down"}})
		if err := brokertest.MustGet(t, ch, work).Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	park("first-1")
	brokertest.WaitDepth(t, lot, 1, 15*time.Second)
	home := t.TempDir()
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm := newTmux(t, env, 140, 30, clitest.Binary(t)+" tui "+lot)
	tm.waitFor("the list", "1 messages")
	tm.waitFor("the browse to end", "all given back")
	tm.waitFor("the tail", " live ")
	park("arrived-2")
	tm.waitFor("the arrival counted", "1 new since opened (+)")
	tm.waitFor("the arrival listed", "+arrived-2")
	tm.keys("q")
	tm.waitFor("the program to end", "EXITED:0")
	waitDepth(t, ch, lot, 2, "after quitting the parking lot (the tail took nothing)")
}
