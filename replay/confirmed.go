package replay

import (
	"encoding/binary"
	"errors"

	"github.com/parkinglot/parkinglot/broker/store"
)

// confirmedLog holds the copies removed in the current pass (run.confirmed):
// after a lost connection their acks may not have reached the broker, and a
// message that shows up again is re-sent with the same x-replay-id. Every
// removal of a pass is one, so a million-message replay would hold a
// million of them: they go to a private temporary file (store.Records, one
// offset a copy in memory) and are read back only after a lost connection.
// If the file cannot be written they are kept in memory instead.
type confirmedLog struct {
	recs *store.Records
	mem  []keyedCopy // when the file failed
	n    int
}

type keyedCopy struct {
	key string
	pc  pendingCopy
}

func (c *confirmedLog) add(key string, pc pendingCopy) {
	c.n++
	if c.recs == nil && c.mem == nil {
		c.recs, _ = store.NewRecords("", "parkinglot-replay-*.confirmed", "replay confirmations")
	}
	if c.recs != nil {
		_, err := c.recs.AppendWith(func(buf []byte) ([]byte, error) {
			for _, s := range [...]string{key, pc.id, pc.replayID} {
				buf = binary.AppendUvarint(buf, uint64(len(s)))
				buf = append(buf, s...)
			}
			return buf, nil
		})
		if err == nil {
			return
		}
		c.toMemory()
	}
	c.mem = append(c.mem, keyedCopy{key, pc})
}

// toMemory moves what the file holds into memory and drops the file.
func (c *confirmedLog) toMemory() {
	all := []keyedCopy{}
	_ = c.each(func(key string, pc pendingCopy) { all = append(all, keyedCopy{key, pc}) })
	_ = c.recs.Close()
	c.recs, c.mem = nil, all
}

var errConfirmedRecord = errors.New("replay confirmations: corrupt record")

// each calls fn for every copy, in the order they were added; they are all
// counted (their removal was counted as done).
func (c *confirmedLog) each(fn func(key string, pc pendingCopy)) error {
	for _, k := range c.mem {
		fn(k.key, k.pc)
	}
	if c.recs == nil {
		return nil
	}
	var bad error
	err := c.recs.Scan(0, func(_ int, rec []byte) bool {
		var f [3]string
		for i := range f {
			n, k := binary.Uvarint(rec)
			if k <= 0 || uint64(len(rec)-k) < n {
				bad = errConfirmedRecord
				return false
			}
			f[i], rec = string(rec[k:k+int(n)]), rec[k+int(n):]
		}
		fn(f[0], pendingCopy{id: f[1], replayID: f[2], counted: true})
		return true
	})
	return errors.Join(err, bad)
}

// reset forgets every copy (a new pass begins) and removes the file.
func (c *confirmedLog) reset() {
	if c.recs != nil {
		_ = c.recs.Close()
	}
	*c = confirmedLog{}
}
