package format

import (
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/retrycore"
)

// Published is `publish`'s line: how many, where, and the ids (the first
// three, then a count).
func Published(n int, exchange, key string, ids []string) string {
	line := fmt.Sprintf("published %d message(s) to %s (persistent, confirmed)", n, Destination(retrycore.Destination{Exchange: exchange, RoutingKey: key}))
	if len(ids) == 0 {
		return line
	}
	shown := ids[:min(len(ids), 3)]
	quoted := make([]string, len(shown))
	for i, id := range shown {
		quoted[i] = Name(id)
	}
	line += ": " + strings.Join(quoted, ", ")
	if len(ids) > len(shown) {
		line += fmt.Sprintf(" … (%d more)", len(ids)-len(shown))
	}
	return line
}
