//go:build integration

package cli_test

import (
	"os"
	"testing"

	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestMain removes the binary the terminal and broker tests built
// (clitest.Binary) once the package's tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.RemoveBinary()
	os.Exit(code)
}
