package broker

import (
	"fmt"
	"os"
	"sync"
)

// Spool keeps browsed messages in a private temporary file, so a 100k
// message parking lot can be shown without holding every body in memory:
// only offsets stay in memory, and a message is read back when it is shown.
// Records are in the compact binary form of spoolcodec.go, and are written
// spoolFlush bytes at a time rather than one write(2) per message.
type Spool struct {
	mu      sync.Mutex
	f       *os.File
	size    int64  // bytes appended, written or pending
	written int64  // bytes in the file; the rest is in pending
	pending []byte // records appended but not yet written
	entries []spoolEntry
}

// spoolFlush is how many bytes of records are gathered per write.
const spoolFlush = 256 << 10

type spoolEntry struct {
	off int64
	n   int32
}

// NewSpool creates the spool file (mode 0600) in dir ("" for the system
// temporary directory). Close removes it.
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "parkinglot-browse-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("browse spool: %w", err)
	}
	// CreateTemp already uses 0600; keep it explicit, the file holds bodies.
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("browse spool: %w", err)
	}
	return &Spool{f: f}, nil
}

// Append stores a message and returns its index.
func (s *Spool) Append(m Message) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return 0, fmt.Errorf("browse spool: closed")
	}
	before := len(s.pending)
	buf, err := appendRecord(s.pending, m)
	if err != nil {
		s.pending = s.pending[:before]
		return 0, fmt.Errorf("browse spool: %w", err)
	}
	s.pending = buf
	n := len(buf) - before
	s.entries = append(s.entries, spoolEntry{off: s.size, n: int32(n)})
	s.size += int64(n)
	if len(s.pending) >= spoolFlush {
		if err := s.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(s.entries) - 1, nil
}

func (s *Spool) flushLocked() error {
	if len(s.pending) == 0 {
		return nil
	}
	if _, err := s.f.WriteAt(s.pending, s.written); err != nil {
		return fmt.Errorf("browse spool: %w", err)
	}
	s.written += int64(len(s.pending))
	s.pending = s.pending[:0]
	return nil
}

// Len is the number of messages stored.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Get reads message i back.
func (s *Spool) Get(i int) (Message, error) {
	s.mu.Lock()
	if i < 0 || i >= len(s.entries) {
		s.mu.Unlock()
		return Message{}, fmt.Errorf("browse spool: no message %d", i)
	}
	e := s.entries[i]
	buf := make([]byte, e.n)
	if e.off >= s.written {
		// Not written yet: it is in the pending records.
		copy(buf, s.pending[e.off-s.written:])
		s.mu.Unlock()
	} else {
		f := s.f
		s.mu.Unlock()
		if _, err := f.ReadAt(buf, e.off); err != nil {
			return Message{}, fmt.Errorf("browse spool: %w", err)
		}
	}
	m, err := decodeRecord(buf)
	if err != nil {
		return Message{}, fmt.Errorf("%w (message %d)", err, i)
	}
	return m, nil
}

// Close removes the spool file.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	s.f = nil
	if rmErr := os.Remove(name); err == nil {
		err = rmErr
	}
	return err
}
