package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Records is a private temporary file of numbered records, appended by one
// goroutine and read back by any: the browse spool's messages and the TUI's
// per-message rows live in them, so that what a browse found is on disk
// and memory keeps only one offset (8 bytes) a record. Records are gathered
// recordsFlush bytes at a time rather than one write(2) each; a record not
// yet written is read from memory.
type Records struct {
	name string // for errors: "browse spool", "message rows", …

	mu      sync.Mutex
	f       *os.File
	path    string  // to remove at Close; "" once the name is gone
	size    int64   // bytes appended, written or pending
	written int64   // bytes in the file; the rest is in pending
	pending []byte  // records appended but not yet written
	offs    []int64 // where each record starts; the next one's start ends it
}

// recordsFlush is how many bytes of records are gathered per write.
const recordsFlush = 256 << 10

// ErrClosed is wrapped by what a closed Records returns (a browse given up
// on while it was still appending).
var ErrClosed = errors.New("closed")

// NewRecords creates the file (mode 0600: it may hold message bodies and
// headers) in dir ("" for the system temporary directory), its name from
// pattern as os.CreateTemp takes it. name says what it holds in errors.
//
// The file's name is removed at once where the system allows it (the open
// file lives on until Close), so a program killed — a terminal closed, a
// SIGKILL — leaves no copy of the messages behind. Elsewhere Close removes
// it.
func NewRecords(dir, pattern, name string) (*Records, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// CreateTemp already uses 0600; keep it explicit.
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &Records{name: name, f: f, path: f.Name()}
	if os.Remove(r.path) == nil {
		r.path = ""
	}
	return r, nil
}

// Append stores one record and returns its number (0, 1, 2, …).
func (r *Records) Append(rec []byte) (int, error) {
	return r.AppendWith(func(buf []byte) ([]byte, error) { return append(buf, rec...), nil })
}

// AppendWith stores the record enc appends to buf (so a record is encoded
// straight into the pending bytes, not copied there), and returns its
// number. An error from enc stores nothing.
func (r *Records) AppendWith(enc func(buf []byte) ([]byte, error)) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	before := len(r.pending)
	buf, err := enc(r.pending)
	if err != nil {
		r.pending = r.pending[:before]
		return 0, fmt.Errorf("%s: %w", r.name, err)
	}
	r.pending = buf
	r.offs = append(r.offs, r.size)
	r.size += int64(len(buf) - before)
	if len(r.pending) >= recordsFlush {
		if err := r.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(r.offs) - 1, nil
}

func (r *Records) flushLocked() error {
	if len(r.pending) == 0 {
		return nil
	}
	if _, err := r.f.WriteAt(r.pending, r.written); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.written += int64(len(r.pending))
	r.pending = r.pending[:0]
	return nil
}

// Len is the number of records stored.
func (r *Records) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.offs)
}

// Get reads record i back (a new slice).
func (r *Records) Get(i int) ([]byte, error) {
	r.mu.Lock()
	if r.f == nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	if i < 0 || i >= len(r.offs) {
		r.mu.Unlock()
		return nil, fmt.Errorf("%s: no record %d", r.name, i)
	}
	off, end := r.offs[i], r.size
	if i+1 < len(r.offs) {
		end = r.offs[i+1]
	}
	buf := make([]byte, end-off)
	if off >= r.written {
		// Not written yet: it is in the pending records (records are
		// written whole, so a record is all pending or all written).
		copy(buf, r.pending[off-r.written:])
		r.mu.Unlock()
		return buf, nil
	}
	f := r.f
	r.mu.Unlock()
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	return buf, nil
}

// Scan calls fn with records from, from+1, … up to the number stored when
// it began, in order, until fn returns false. rec is only valid during the
// call. It reads the file in large sequential chunks: a scan of a million
// records costs a few sequential reads of the file, not a million.
func (r *Records) Scan(from int, fn func(i int, rec []byte) bool) error {
	r.mu.Lock()
	if r.f == nil {
		r.mu.Unlock()
		return fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	// Write what is pending so the whole range is in the file; the offsets
	// are copied as a slice header (appends never change existing ones).
	if err := r.flushLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	offs, size, f := r.offs, r.size, r.f
	r.mu.Unlock()
	if from >= len(offs) {
		return nil
	}
	var chunk []byte
	var chunkOff int64 // file offset of chunk[0]
	for i := max(from, 0); i < len(offs); i++ {
		off, end := offs[i], size
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		if off < chunkOff || end > chunkOff+int64(len(chunk)) {
			n := max(int64(recordsFlush)*4, end-off)
			n = min(n, size-off)
			if int64(cap(chunk)) < n {
				chunk = make([]byte, n)
			}
			chunk = chunk[:n]
			if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			chunkOff = off
		}
		if !fn(i, chunk[off-chunkOff:end-chunkOff]) {
			return nil
		}
	}
	return nil
}

// Close removes the file. Appends and reads after it are errors wrapping
// ErrClosed.
func (r *Records) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f, r.pending, r.offs = nil, nil, nil
	if r.path != "" {
		if rmErr := os.Remove(r.path); err == nil {
			err = rmErr
		}
		r.path = ""
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}
