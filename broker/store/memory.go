package store

import (
	"os"
	"runtime/debug"
)

// MemoryLimit is the soft memory limit a program that browses a whole
// parking lot runs with (the TUI). Its list keeps about 40 bytes a message
// (Rows), but a browse allocates and drops a summary and a copy of every
// message as it streams, and Go's default collector lets the heap grow to
// twice what is live before it collects: the soft limit makes it collect
// that garbage sooner, at the cost of a little more collection near the
// limit. It is soft: what is live may exceed it, the program then just
// collects more often.
const MemoryLimit = 128 << 20

// ApplyMemoryLimit sets MemoryLimit unless the user chose one with
// GOMEMLIMIT (which the Go runtime has already applied).
func ApplyMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(MemoryLimit)
}
