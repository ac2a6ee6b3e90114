package body

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/hamba/avro/v2"
)

// The Avro framings a body may carry before its datum.
const (
	confluentMagic = 0x00 // Confluent wire format: 0, a 4-byte schema id, the datum
)

// singleObjectMagic starts Avro's single-object encoding: C3 01, the
// schema's 8-byte CRC-64-AVRO fingerprint (little-endian), the datum.
var singleObjectMagic = [2]byte{0xc3, 0x01}

// avroFraming finds the schema a framed body names: single-object encoding
// by its fingerprint, the Confluent wire format by its id (when ids are
// mapped). It returns the schema, the datum and the framing's name; no
// schema when b is not framed or names none loaded.
func (s *Schemas) avroFraming(b []byte) (avro.Schema, []byte, string) {
	if s == nil {
		return nil, b, ""
	}
	if len(b) >= 10 && b[0] == singleObjectMagic[0] && b[1] == singleObjectMagic[1] {
		if sc, ok := s.avroFP[binary.LittleEndian.Uint64(b[2:10])]; ok {
			return sc, b[10:], "single-object encoding"
		}
	}
	if len(b) >= 5 && b[0] == confluentMagic && len(s.confluent) > 0 {
		if sc, ok := s.confluent[binary.BigEndian.Uint32(b[1:5])]; ok {
			return sc, b[5:], fmt.Sprintf("Confluent schema id %d", binary.BigEndian.Uint32(b[1:5]))
		}
	}
	return nil, b, ""
}

// avroAPI reads and writes Avro as the reference implementations write
// it (blocks without a byte size), bodies up to MaxDecompressed.
var avroAPI = avro.Config{DisableBlockSizeHeader: true, MaxByteSliceSize: MaxDecompressed}.Freeze()

// decodeAvro decodes one datum of sc that is the whole of b into plain
// values (plainAvro).
func decodeAvro(sc avro.Schema, b []byte) (any, error) {
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI)).Reset(b)
	var v any
	r.ReadVal(sc, &v)
	if r.Error != nil {
		return nil, r.Error
	}
	// A byte left over means the schema is not the body's.
	var one [1]byte
	if r.Read(one[:]); r.Error == nil {
		return nil, errors.New("bytes left after the datum")
	}
	return plainAvro(v), nil
}

// plainAvro is a decoded datum as a filter compares it and JSON writes
// it: a union keeps Avro's JSON form ({"string": "x"}), every integer is
// int, float32 float64, a decimal a float64, times time.Time.
func plainAvro(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainAvro(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = plainAvro(e)
		}
		return x
	case int32:
		return int(x)
	case int64:
		return int(x)
	case float32:
		return float64(x)
	case *big.Rat:
		f, _ := x.Float64()
		return f
	case time.Time:
		return x.UTC()
	case time.Duration:
		return x.String()
	}
	return v
}
