package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The spool's record format: a compact binary form of a Message, written
// and read only by this process (the spool file is private and removed on
// Close). It replaced the JSON form there, which cost half of a 100k-message
// browse's CPU (typed JSON of every header, then encoding/json over the
// result), so the browse fell behind the broker and amqp091-go buffered the
// backlog in memory. Every value keeps its Go type, strings and header
// names keep their bytes (UTF-8 or not), so Get returns what was delivered.
//
// A record is a version byte, then the fields below in order. Strings and
// byte arrays are a uvarint length and the bytes; a value is a type tag
// (AMQP's field-table letters) and its payload.

const spoolVersion = 1

// Header value tags, as in AMQP 0-9-1 field tables (RabbitMQ's dialect).
const (
	tagVoid      = 'V'
	tagBool      = 't'
	tagInt8      = 'b'
	tagUint8     = 'B'
	tagInt16     = 's'
	tagUint16    = 'u'
	tagInt32     = 'I'
	tagUint32    = 'i'
	tagInt64     = 'l'
	tagFloat32   = 'f'
	tagFloat64   = 'd'
	tagDecimal   = 'D'
	tagString    = 'S'
	tagBytes     = 'x'
	tagTimestamp = 'T'
	tagTable     = 'F'
	tagArray     = 'A'
	tagNoTable   = '-' // Message.Headers is nil (no headers on the wire)
)

var errSpoolRecord = errors.New("browse spool: corrupt record")

// appendRecord appends m's record to buf.
func appendRecord(buf []byte, m Message) ([]byte, error) {
	p := m.Properties
	buf = append(buf, spoolVersion)
	for _, s := range [...]string{p.ContentType, p.ContentEncoding, p.CorrelationID, p.ReplyTo,
		p.Expiration, p.MessageID, p.Type, p.UserID, p.AppID, m.Exchange, m.RoutingKey} {
		buf = appendString(buf, s)
	}
	flags := byte(0)
	if m.Redelivered {
		flags |= 1
	}
	buf = append(buf, p.DeliveryMode, p.Priority, flags)
	buf = appendTime(buf, p.Timestamp)
	if m.Headers == nil {
		buf = append(buf, tagNoTable)
	} else {
		var err error
		if buf, err = appendTable(buf, m.Headers, 0); err != nil {
			return nil, err
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(m.Body)))
	return append(buf, m.Body...), nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendTime keeps the instant to the nanosecond; the zero time is a flag,
// so it comes back as the zero time.
func appendTime(buf []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	buf = binary.AppendVarint(buf, t.Unix())
	return binary.AppendUvarint(buf, uint64(t.Nanosecond()))
}

func appendTable(buf []byte, t amqp.Table, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
	}
	buf = append(buf, tagTable)
	buf = binary.AppendUvarint(buf, uint64(len(t)))
	for k, v := range t {
		buf = appendString(buf, k)
		var err error
		if buf, err = appendValue(buf, v, depth+1); err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
	}
	return buf, nil
}

func appendValue(buf []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, tagVoid), nil
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		return append(buf, tagBool, b), nil
	case int8:
		return append(buf, tagInt8, byte(x)), nil
	case uint8:
		return append(buf, tagUint8, x), nil
	case int16:
		return binary.BigEndian.AppendUint16(append(buf, tagInt16), uint16(x)), nil
	case uint16:
		return binary.BigEndian.AppendUint16(append(buf, tagUint16), x), nil
	case int32:
		return binary.BigEndian.AppendUint32(append(buf, tagInt32), uint32(x)), nil
	case int:
		// amqp091-go writes a Go int as a signed 32-bit field; the spool
		// gives back what the wire would.
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, fmt.Errorf("%w: Go int %d does not fit the int32 amqp091-go writes", ErrBadValue, x)
		}
		return binary.BigEndian.AppendUint32(append(buf, tagInt32), uint32(int32(x))), nil
	case uint32:
		return binary.BigEndian.AppendUint32(append(buf, tagUint32), x), nil
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, tagInt64), uint64(x)), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(buf, tagFloat32), math.Float32bits(x)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(x)), nil
	case amqp.Decimal:
		return binary.BigEndian.AppendUint32(append(buf, tagDecimal, x.Scale), uint32(x.Value)), nil
	case string:
		return appendString(append(buf, tagString), x), nil
	case []byte:
		buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(x)))
		return append(buf, x...), nil
	case time.Time:
		return appendTime(append(buf, tagTimestamp), x), nil
	case amqp.Table:
		return appendTable(buf, x, depth)
	case map[string]any:
		return appendTable(buf, amqp.Table(x), depth)
	case []any:
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
		}
		buf = binary.AppendUvarint(append(buf, tagArray), uint64(len(x)))
		for i, e := range x {
			var err error
			if buf, err = appendValue(buf, e, depth+1); err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return buf, nil
	}
	return nil, fmt.Errorf("%w: Go type %T has no AMQP type", ErrBadValue, v)
}

// recordReader reads a record; the first error sticks and every later read
// returns zero values, so decode checks once at the end.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) fail() {
	if r.err == nil {
		r.err = errSpoolRecord
	}
	r.b = nil
}

func (r *recordReader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recordReader) next(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail()
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// length is a uvarint that must fit in what is left of the record.
func (r *recordReader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *recordReader) string() string { return string(r.next(r.length())) }

func (r *recordReader) time() time.Time {
	if r.byte() == 0 {
		return time.Time{}
	}
	sec := r.varint()
	nsec := r.uvarint()
	if nsec >= 1e9 {
		r.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)) // local zone, as amqp091-go decodes
}

// decodeRecord reads a record appendRecord wrote.
func decodeRecord(data []byte) (Message, error) {
	r := &recordReader{b: data}
	if v := r.byte(); v != spoolVersion {
		return Message{}, fmt.Errorf("%w (version %d)", errSpoolRecord, v)
	}
	var m Message
	p := &m.Properties
	for _, s := range [...]*string{&p.ContentType, &p.ContentEncoding, &p.CorrelationID, &p.ReplyTo,
		&p.Expiration, &p.MessageID, &p.Type, &p.UserID, &p.AppID, &m.Exchange, &m.RoutingKey} {
		*s = r.string()
	}
	p.DeliveryMode, p.Priority = r.byte(), r.byte()
	m.Redelivered = r.byte()&1 != 0
	p.Timestamp = r.time()
	switch tag := r.byte(); tag {
	case tagNoTable:
	case tagTable:
		m.Headers = r.table(0)
	default:
		r.fail()
	}
	if n := r.length(); r.err == nil {
		m.Body = make([]byte, n)
		copy(m.Body, r.next(n))
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err != nil {
		return Message{}, r.err
	}
	return m, nil
}

// table reads a table's entries (its tag already read).
func (r *recordReader) table(depth int) amqp.Table {
	if depth > maxDepth {
		r.fail()
		return nil
	}
	n := r.length() // every entry takes at least one byte
	t := make(amqp.Table, n)
	for i := 0; i < n && r.err == nil; i++ {
		k := r.string()
		t[k] = r.value(depth + 1)
	}
	return t
}

func (r *recordReader) value(depth int) any {
	switch r.byte() {
	case tagVoid:
		return nil
	case tagBool:
		return r.byte() != 0
	case tagInt8:
		return int8(r.byte())
	case tagUint8:
		return r.byte()
	case tagInt16:
		if b := r.next(2); b != nil {
			return int16(binary.BigEndian.Uint16(b))
		}
	case tagUint16:
		if b := r.next(2); b != nil {
			return binary.BigEndian.Uint16(b)
		}
	case tagInt32:
		if b := r.next(4); b != nil {
			return int32(binary.BigEndian.Uint32(b))
		}
	case tagUint32:
		if b := r.next(4); b != nil {
			return binary.BigEndian.Uint32(b)
		}
	case tagInt64:
		if b := r.next(8); b != nil {
			return int64(binary.BigEndian.Uint64(b))
		}
	case tagFloat32:
		if b := r.next(4); b != nil {
			return math.Float32frombits(binary.BigEndian.Uint32(b))
		}
	case tagFloat64:
		if b := r.next(8); b != nil {
			return math.Float64frombits(binary.BigEndian.Uint64(b))
		}
	case tagDecimal:
		scale := r.byte()
		if b := r.next(4); b != nil {
			return amqp.Decimal{Scale: scale, Value: int32(binary.BigEndian.Uint32(b))}
		}
	case tagString:
		return r.string()
	case tagBytes:
		return append([]byte{}, r.next(r.length())...)
	case tagTimestamp:
		return r.time()
	case tagTable:
		return r.table(depth)
	case tagArray:
		if depth > maxDepth {
			r.fail()
			return nil
		}
		n := r.length()
		if n == 0 {
			return []any(nil) // as amqp091-go reads an empty array
		}
		out := make([]any, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			out = append(out, r.value(depth+1))
		}
		return out
	default:
		r.fail()
	}
	return nil
}
