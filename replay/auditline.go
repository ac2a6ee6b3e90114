package replay

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAuditLine appends e as the JSON line encoding/json's Encoder writes
// for it (the same fields, order, omissions and escaping, and a newline),
// without reflection: a million-message replay writes a million of them.
// auditline_test.go holds it to encoding/json's output.
func appendAuditLine(b []byte, e *AuditEntry) []byte {
	b = append(b, `{"time":`...)
	b = appendJSONTime(b, e.Time)
	b = append(b, `,"user":{"os":`...)
	b = appendJSONString(b, e.User.OS)
	b = append(b, `,"amqp":`...)
	b = appendJSONString(b, e.User.AMQP)
	b = append(b, `},"action":`...)
	b = appendJSONString(b, e.Action)
	if e.Queue != "" {
		b = append(b, `,"from_queue":`...)
		b = appendJSONString(b, e.Queue)
	}
	if e.To != nil {
		b = append(b, `,"to":{"exchange":`...)
		b = appendJSONString(b, e.To.Exchange)
		b = append(b, `,"routing_key":`...)
		b = appendJSONString(b, e.To.RoutingKey)
		b = append(b, '}')
	}
	if e.File != "" {
		b = append(b, `,"file":`...)
		b = appendJSONString(b, e.File)
	}
	if e.Policy != "" {
		b = append(b, `,"policy":`...)
		b = appendJSONString(b, e.Policy)
	}
	b = append(b, `,"message_id":`...)
	b = appendJSONString(b, e.MessageID)
	if e.ReplayID != "" {
		b = append(b, `,"replay_id":`...)
		b = appendJSONString(b, e.ReplayID)
	}
	if e.Run != "" {
		b = append(b, `,"run":`...)
		b = appendJSONString(b, e.Run)
	}
	b = append(b, `,"result":`...)
	b = appendJSONString(b, e.Result)
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, e.Error)
	}
	return append(b, "}\n"...)
}

// appendJSONTime is time.Time's MarshalJSON (RFC 3339 with nanoseconds)
// for the years it accepts, which every entry's time is in.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

const jsonHex = "0123456789abcdef"

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString quotes s as encoding/json does by default: HTML's <, >
// and & escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = strconv.AppendInt(b, int64(r&0xf), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
