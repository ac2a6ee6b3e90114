package broker

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Spool keeps browsed messages in a private temporary file, so a 100k
// message parking lot can be shown without holding every body in memory:
// only offsets stay in memory, and a message is read back when it is shown.
type Spool struct {
	mu      sync.Mutex
	f       *os.File
	size    int64
	entries []spoolEntry
}

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
	data, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	data = append(data, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.WriteAt(data, s.size); err != nil {
		return 0, fmt.Errorf("browse spool: %w", err)
	}
	s.entries = append(s.entries, spoolEntry{off: s.size, n: int32(len(data))})
	s.size += int64(len(data))
	return len(s.entries) - 1, nil
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
	s.mu.Unlock()
	buf := make([]byte, e.n)
	if _, err := s.f.ReadAt(buf, e.off); err != nil {
		return Message{}, fmt.Errorf("browse spool: %w", err)
	}
	var m Message
	if err := json.Unmarshal(buf, &m); err != nil {
		return Message{}, fmt.Errorf("browse spool: %w", err)
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
