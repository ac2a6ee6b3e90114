package brokertest

import (
	"testing"

	"github.com/parkinglot/parkinglot/broker"
)

// Version is the test broker's server version. Tests whose broker
// behaviour differs by version assert what this version does; they never
// skip one.
func Version(t testing.TB) broker.Version {
	t.Helper()
	v := Dial(t, "parkinglot-test version").ServerVersion
	if !v.Known() {
		t.Fatal("the test broker did not say its version")
	}
	return v
}
