//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIExportDeleteImport: in a real terminal, the loop of a person who
// keeps a copy, clears a parking lot and puts the messages back: x exports
// every message to a file, ctrl+a and d delete them all, and i offers that
// file and imports it into the parking lot, with the same ids.
func TestTUIExportDeleteImport(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) {
			ch := brokertest.Channel(t)
			lot := brokertest.Name(t, "dlq")
			args := amqp.Table{}
			if qt == "quorum" {
				args["x-queue-type"] = "quorum"
			}
			brokertest.DeclareQueue(t, ch, lot, args)
			for i := range 3 {
				brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("imp-%d", i), Body: []byte(`{"n":1}`),
					Headers: amqp.Table{"x-last-error": "boom"}})
			}
			waitDepth(t, ch, lot, 3, "the parked messages")
			file := filepath.Join(t.TempDir(), "copy.jsonl")
			env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
				"XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "NO_COLOR=1")
			tm := newTmux(t, env, 120, 40, clitest.Binary(t)+" tui "+lot)
			tm.waitFor("the browse to end", "all given back")

			tm.keys("x")
			tm.waitFor("the export dialog", "Export 3 message(s)")
			tm.keys("C-u")
			tm.literal(file)
			tm.keys("Enter")
			tm.waitFor("the export", "exported 3 to")
			tm.waitFor("the list again", "all given back")
			if b, err := os.ReadFile(file); err != nil || len(b) == 0 {
				t.Fatalf("the export file: %v (%d bytes)", err, len(b))
			}

			tm.keys("C-a")
			tm.waitFor("the selection", "3 selected")
			tm.keys("d")
			tm.waitFor("the delete dialog", "Delete 3 message(s)")
			tm.keys("Enter")
			waitDepth(t, ch, lot, 0, "after the delete")
			tm.waitFor("the emptied list", "all given back")

			tm.keys("i")
			tm.waitFor("the import dialog offering the file", filepath.Base(file))
			tm.keys("Enter")
			tm.waitFor("the import", "imported 3")
			waitDepth(t, ch, lot, 3, "after the import")
			// The list reloads with a pass that holds the messages a
			// moment: read them once the program is gone.
			tm.waitFor("the list again", "all given back")
			tm.keys("q")
			tm.waitFor("the exit", "EXITED:0")
			waitDepth(t, ch, lot, 3, "after the exit")
			ids := map[string]bool{}
			for range 3 {
				d, ok, err := ch.Get(lot, false)
				if err != nil || !ok {
					t.Fatalf("get: %v %v", ok, err)
				}
				ids[d.MessageId] = true
			}
			if err := ch.Nack(0, true, true); err != nil {
				t.Fatal(err)
			}
			if len(ids) != 3 || !ids["imp-0"] || !ids["imp-1"] || !ids["imp-2"] {
				t.Fatalf("ids after the import: %v", ids)
			}
		})
	}
}
