package replay_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The check before an import publishes anything finds what the broker
// would refuse only at publish time, naming the line: a line 1 that is
// fine does not go out before a bad line 2 stops the run. (Import runs
// the same check first; PlanImport needs no broker.)
func TestPlanImportRefusesWhatCannotBePublished(t *testing.T) {
	long := strings.Repeat("x", 256)
	good := `{"queue":"orders","message":{"properties":{"content_type":"text/plain","expiration":"60000"},"headers":null,"body_encoding":"utf8","body":"ok"}}`
	line := func(props, headers string) string {
		return `{"queue":"orders","message":{"properties":{` + props + `},"headers":` + headers + `,"body_encoding":"utf8","body":"x"}}`
	}
	cases := []struct {
		name, line, want string
	}{
		{"negative expiration", line(`"expiration":"-5"`, "null"), `line 2: properties.expiration "-5": want a whole number of milliseconds, 0 or more`},
		{"fractional expiration", line(`"expiration":"2.5"`, "null"), `line 2: properties.expiration "2.5"`},
		{"expiration over 10 years", line(`"expiration":"315360000001"`, "null"), `line 2: properties.expiration "315360000001": RabbitMQ takes at most 315360000000 milliseconds (10 years)`},
		{"expiration of 30 digits", line(`"expiration":"999999999999999999999999999999"`, "null"), `RabbitMQ takes at most 315360000000 milliseconds`},
		{"long content_type", line(`"content_type":"`+long+`"`, "null"), "line 2: properties.content_type is 256 bytes; AMQP allows at most 255"},
		{"long content_encoding", line(`"content_encoding":"`+long+`"`, "null"), "line 2: properties.content_encoding is 256 bytes"},
		{"long correlation_id", line(`"correlation_id":"`+long+`"`, "null"), "line 2: properties.correlation_id is 256 bytes"},
		{"long reply_to", line(`"reply_to":"`+long+`"`, "null"), "line 2: properties.reply_to is 256 bytes"},
		{"long message_id", line(`"message_id":"`+long+`"`, "null"), "line 2: properties.message_id is 256 bytes"},
		{"long type", line(`"type":"`+long+`"`, "null"), "line 2: properties.type is 256 bytes"},
		{"long user_id", line(`"user_id":"`+long+`"`, "null"), "line 2: properties.user_id is 256 bytes"},
		{"long app_id", line(`"app_id":"`+long+`"`, "null"), "line 2: properties.app_id is 256 bytes"},
		{"long header name", line(``, `{"`+long+`":{"type":"string","value":"v"}}`), `line 2: header name "xxxx`},
		{"priority over 255", line(`"priority":300`, "null"), `line 2: "properties.priority" is a JSON number 300; want a whole number 0–255`},
		{"fractional priority", line(`"priority":1.5`, "null"), `want a whole number 0–255`},
		{"long queue name", `{"queue":"` + long + `","message":{"body_encoding":"utf8","body":"x"}}`, "line 2: the queue name is 256 bytes; AMQP allows at most 255"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
			if err := os.WriteFile(file, []byte(good+"\n"+c.line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := replay.PlanImport(replay.ImportOptions{File: file})
			if !errors.Is(err, replay.ErrBadImport) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("PlanImport = %v\nwant ErrBadImport with %q on one line", err, c.want)
			}
			if !strings.Contains(err.Error(), "nothing was published") {
				t.Errorf("error %q does not say nothing was published", err)
			}
		})
	}

	// The line that is fine plans as before.
	file := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(file, []byte(good+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if plan, err := replay.PlanImport(replay.ImportOptions{File: file}); err != nil || plan.Messages != 1 {
		t.Fatalf("good file: %+v, %v", plan, err)
	}
	// A destination that can never route is refused before the file is read.
	_, err := replay.PlanImport(replay.ImportOptions{File: file, To: &retrycore.Destination{}})
	if !errors.Is(err, replay.ErrBadSelection) || !errors.Is(err, retrycore.ErrNoQueueName) {
		t.Fatalf("To the default exchange with no key: %v, want ErrBadSelection and ErrNoQueueName", err)
	}
}

// The engine's destination rule refuses the default exchange with an
// empty routing key, for the CLI and the TUI alike.
func TestCheckDestinationRefusesEmptyKeyOnDefaultExchange(t *testing.T) {
	err := replay.CheckDestination(&retrycore.Destination{}, "")
	if !errors.Is(err, replay.ErrBadSelection) || !errors.Is(err, retrycore.ErrNoQueueName) {
		t.Fatalf("CheckDestination(default exchange, \"\") = %v", err)
	}
	for _, d := range []retrycore.Destination{{RoutingKey: "orders"}, {Exchange: "fanout.ex"}} {
		if err := replay.CheckDestination(&d, ""); err != nil {
			t.Errorf("CheckDestination(%+v) = %v", d, err)
		}
	}
}
