package broker

import (
	"fmt"

	"github.com/parkinglot/parkinglot/broker/store"
)

// Spool keeps browsed messages in a private temporary file
// (store.Records), so a parking lot of any size can be shown without
// holding every body in memory: only an offset a message stays in memory,
// and a message is read back when it is shown. Records are in the compact
// binary form of spoolcodec.go, which stays here with the Message it
// encodes.
type Spool struct{ r *store.Records }

// NewSpool creates the spool file (mode 0600) in dir ("" for the system
// temporary directory). Close removes it.
func NewSpool(dir string) (*Spool, error) {
	r, err := store.NewRecords(dir, "parkinglot-browse-*.spool", "browse spool")
	if err != nil {
		return nil, err
	}
	return &Spool{r: r}, nil
}

// Append stores a message and returns its index.
func (s *Spool) Append(m Message) (int, error) {
	return s.r.AppendWith(func(buf []byte) ([]byte, error) { return appendRecord(buf, m) })
}

// Len is the number of messages stored.
func (s *Spool) Len() int { return s.r.Len() }

// Get reads message i back.
func (s *Spool) Get(i int) (Message, error) {
	buf, err := s.r.Get(i)
	if err != nil {
		return Message{}, err
	}
	m, err := decodeRecord(buf)
	if err != nil {
		return Message{}, fmt.Errorf("%w (message %d)", err, i)
	}
	return m, nil
}

// Close removes the spool file.
func (s *Spool) Close() error { return s.r.Close() }
