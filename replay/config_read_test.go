package replay_test

import (
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
