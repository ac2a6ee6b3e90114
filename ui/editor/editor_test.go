package editor

import "testing"

// TestFromEnvOrder: $VISUAL, then $EDITOR (blank ones skipped, arguments
// kept), then vi, which is the fallback that needs a terminal.
func TestFromEnvOrder(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		want     string
		fallback bool
	}{
		{map[string]string{"VISUAL": "code -w", "EDITOR": "nano"}, "code -w", false},
		{map[string]string{"VISUAL": "  ", "EDITOR": "nano"}, "nano", false},
		{map[string]string{}, Default, true},
	} {
		got, fb := FromEnv(func(k string) string { return c.env[k] })
		if got != c.want || fb != c.fallback {
			t.Errorf("%v: %q, %v; want %q, %v", c.env, got, fb, c.want, c.fallback)
		}
	}
}
