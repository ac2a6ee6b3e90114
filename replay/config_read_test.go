package replay_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// A parking lot's rate the replay would refuse is refused when the config
// is read, naming the file and the key.
func TestReadConfigRefusesABadRate(t *testing.T) {
	for _, rate := range []string{"-5", ".nan", "0.0001"} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte("parking_lots:\n  orders.dlq: {rate: "+rate+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := replay.ReadConfig(path)
		if err == nil || !strings.Contains(err.Error(), path+": parking_lots.orders.dlq.rate:") {
			t.Errorf("rate %s: %v, want an error naming the file and parking_lots.orders.dlq.rate", rate, err)
		}
	}
}

// TestReadConfigNeedsTheFileLoadConfigDoesNot: a file named explicitly
// (ReadConfig) must exist; the default path (LoadConfig) may be absent.
func TestReadConfigNeedsTheFileLoadConfigDoesNot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config.yaml")
	if _, err := replay.ReadConfig(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadConfig(a missing file) = %v, want an error wrapping fs.ErrNotExist", err)
	}
	if c, err := replay.LoadConfig(missing); err != nil || len(c.Contexts)+len(c.ParkingLots) != 0 {
		t.Errorf("LoadConfig(a missing file) = %+v, %v; want an empty config", c, err)
	}
	if _, err := replay.ReadConfig(""); err != nil {
		t.Errorf("ReadConfig(\"\") = %v, want no file and no error", err)
	}
}

// The config's decode names its files relative to the config file; its
// queue rules and the --message-type flag make the reader's rules, the
// first queue rule that matches winning; a rule without its type is
// refused naming the key.
func TestReadConfigDecodeSection(t *testing.T) {
	schemas, err := filepath.Abs(filepath.Join("..", "testdata", "frameworks", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"shop.proto", "payment.avsc"} {
		b, err := os.ReadFile(filepath.Join(schemas, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(`decode:
  proto_path: [.]
  proto: [shop.proto]
  avro_schema: [payment.avsc]
  confluent_ids: {7: shop.Payment}
  queues:
    - {queue: "payments.*", format: avro, type: shop.Payment}
    - {queue: "*", format: msgpack}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := replay.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decode.Proto[0] != filepath.Join(dir, "shop.proto") || c.Decode.ProtoPath[0] != dir {
		t.Errorf("paths not relative to the config file: %+v", c.Decode)
	}
	r, err := replay.BodyReader(context.Background(), c.Decode, replay.DecodeFlags{MessageType: "shop.Order"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Queues) != 2 || r.Queues[0].Rule.Type != "shop.Payment" || r.Queues[0].Rule.From != "config decode for payments.*" ||
		r.Default.Type != "shop.Order" || r.Default.From != "--message-type" {
		t.Errorf("reader rules %+v default %+v", r.Queues, r.Default)
	}
	if r, err := replay.BodyReader(context.Background(), replay.Decode{}, replay.DecodeFlags{}); r != nil || err != nil {
		t.Errorf("nothing named: %v %v, want no reader", r, err)
	}
	if err := os.WriteFile(path, []byte("decode:\n  queues:\n    - {queue: q, format: protobuf}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := replay.ReadConfig(path); err == nil || !strings.Contains(err.Error(), "decode.queues[0]: format protobuf needs a type") {
		t.Errorf("a protobuf rule without its type: %v", err)
	}
}
