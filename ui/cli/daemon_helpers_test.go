//go:build integration

package cli_test

import (
	"os"
	"path/filepath"
	"testing"
)

// handlerScript is a test handler under testdata/handlers, by absolute path.
func handlerScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "handlers", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}
