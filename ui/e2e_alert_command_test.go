//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"text/template"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/alerting"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestAlertCommandOpensTheParkingLotInItsVhost: the command an alert
// carries, filled in as Prometheus fills it, opens the parking lot in a
// real terminal even when the person's URL names another vhost and the
// queue's name holds what a shell would read (a space, a quote, a $); the
// messages are listed and none taken.
func TestAlertCommandOpensTheParkingLotInItsVhost(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	vurl, ch := brokertest.VhostChannel(t)
	vhost := broker.Vhost(vurl)
	lot := brokertest.Name(t, "dlq") + " it's $HOME"
	if _, err := ch.QueueDeclare(lot, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("alerted-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": "ledger down 503"}})
	}

	var command string
	for _, r := range alerting.Rules(alerting.Defaults()).Groups[0].Rules {
		if r.Alert == alerting.AlertNotEmpty {
			command = r.Annotations["command"]
		}
	}
	// Prometheus gives an annotation's template $labels, and these two of
	// its functions as it defines them (Go's regexp).
	funcs := template.FuncMap{
		"match": regexp.MatchString,
		"reReplaceAll": func(pattern, repl, text string) string {
			return regexp.MustCompile(pattern).ReplaceAllString(text, repl)
		},
	}
	tmpl, err := template.New("command").Funcs(funcs).Parse(`{{ $labels := . }}` + command)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]string{"vhost": vhost, "queue": lot}); err != nil {
		t.Fatal(err)
	}
	line, ok := strings.CutPrefix(b.String(), "parkinglot ")
	if !ok {
		t.Fatalf("the command %q does not run parkinglot", b.String())
	}

	home := t.TempDir()
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm := newTmux(t, env, 140, 30, clitest.Binary(t)+" "+line)
	tm.waitFor("the parking lot's messages", "3 messages")
	screen := tm.waitFor("the browse to end", "all given back")
	// The queue is in that vhost alone.
	if !strings.Contains(screen, "alerted-2") {
		t.Errorf("the parking lot of vhost %s is not what is shown:\n%s", vhost, screen)
	}
	tm.keys("q")
	tm.waitFor("the exit", "EXITED:0")
	waitDepth(t, ch, lot, 3, lot+" (the messages it had)")
}
