package ui

import (
	"os"
	"runtime/debug"
)

// MemoryLimit is the soft memory limit the TUI runs with. The TUI keeps a
// summary per message (about 500 bytes; 50 MB for a 100k-message parking
// lot), and Go's default collector lets the heap grow to twice what is live
// before it collects: a soft limit keeps a 100k browse well under 200 MB at
// the cost of a little more collection near it. It is soft: a bigger
// parking lot still loads, it just collects more often.
const MemoryLimit = 128 << 20

// ApplyMemoryLimit sets MemoryLimit unless the user chose one with
// GOMEMLIMIT (which the Go runtime has already applied).
func ApplyMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(MemoryLimit)
}
