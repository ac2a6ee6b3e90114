package daemon_test

import (
	"errors"
	"testing"

	"github.com/parkinglot/parkinglot/retrycore/daemon"
)

func TestCheckHandlerWantsExactlyOne(t *testing.T) {
	for _, c := range []struct {
		argv []string
		url  string
		want error
	}{
		{[]string{"./h.sh"}, "", nil},
		{nil, "http://h/", nil},
		{nil, "", daemon.ErrNoHandler},
		{[]string{"./h.sh"}, "http://h/", daemon.ErrTwoHandlers},
	} {
		if err := daemon.CheckHandler(c.argv, c.url); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckHandler(%q, %q) = %v, want %v", c.argv, c.url, err, c.want)
		}
	}
}
