package retrycore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// recordedDir is the repository's testdata/recorded, shared with broker's tests.
const recordedDir = "../testdata/recorded"

// recording is one file of testdata/recorded: a parked delivery exactly as
// the broker handed it over (broker.Message's lossless JSON form), and the
// topology that produced it. Names were unique on the broker and were
// renamed back to the seed names, so the files are stable and readable.
type recording struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	Broker      string `json:"broker"` // server version it was recorded on
	// ParkingLot is the queue the message was taken from.
	ParkingLot string           `json:"parking_lot"`
	Topology   recordedTopology `json:"topology"`
	Message    broker.Message   `json:"message"`
}

type recordedTopology struct {
	Exchanges map[string]string          `json:"exchanges,omitempty"` // name → kind
	Queues    map[string]json.RawMessage `json:"queues"`              // name → typed arguments (broker.EncodeTable)
	Bindings  []recordedBinding          `json:"bindings,omitempty"`
	Flow      []string                   `json:"flow"` // what the recorder's consumer did, step by step
}

type recordedBinding struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
	Queue      string `json:"queue"`
}

// queueArgs returns a recorded queue's arguments as amqp091-go would hold them.
func (r recording) queueArgs(queue string) (amqp.Table, bool, error) {
	raw, ok := r.Topology.Queues[queue]
	if !ok {
		return nil, false, nil
	}
	t, err := broker.DecodeTable(raw)
	return t, true, err
}

// loadRecording reads testdata/recorded/<name>.json.
func loadRecording(t testing.TB, name string) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name+".json"))
	if err != nil {
		t.Fatalf("read recording (regenerate with `go test ./retrycore -run TestRecord -record`): %v", err)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("recording %s: %v", name, err)
	}
	if r.Scenario != name {
		t.Fatalf("recording %s says it is scenario %q", name, r.Scenario)
	}
	return r
}

// recordedNames lists the scenarios in testdata/recorded.
func recordedNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(recordedDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v)", recordedDir, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return names
}
