package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/ui/iostreams"
)

func TestAlertRulesFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code := run(context.Background(), f, []string{"--config", "", "alert-rules", "--oldest-threshold", "30m", "--job", "w"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "parkinglot_oldest_parked_age_seconds > 1800") || !strings.Contains(out.String(), `up{job="w"}`) {
		t.Errorf("rules:\n%s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), f, []string{"--config", "", "alert-rules", "--growing-window", "0s"}); code != ExitUsage {
		t.Errorf("a zero window: exit %d, want %d", code, ExitUsage)
	}
}
