//go:build integration

package cli_test

import (
	"os"
	"testing"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestMain removes the binary the terminal and broker tests built
// (brokertest.Binary) once the package's tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	brokertest.RemoveBinary()
	os.Exit(code)
}
