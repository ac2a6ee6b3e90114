package replay_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

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
