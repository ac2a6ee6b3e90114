package body

import (
	"path"

	"github.com/parkinglot/parkinglot/broker"
)

// Reader reads the bodies of messages with the schemas and rules a person
// configured. A nil Reader reads by the messages' properties alone.
type Reader struct {
	Schemas *Schemas
	// Queues are rules by queue: the first whose pattern (a name, or a
	// glob: orders.*.dlq) matches the message's queue.
	Queues []QueueRule
	// Default reads a body no queue rule and no property says how to
	// (flags).
	Default Rule
	// TypeHeader is a header that names the protobuf message or Avro
	// schema of a body, over the type property ("" none).
	TypeHeader string
}

// QueueRule is how the bodies of the queues Pattern matches are read.
type QueueRule struct {
	Pattern string
	Rule    Rule
}

// Read reads m, parked in queue, by its properties, else by the rule for
// its queue, else by the default.
func (r *Reader) Read(queue string, m broker.Message) Decoded { return r.read(queue, m, false) }

// ReadText is Read(queue, m).Text() without parsing a JSON body, whose
// text is its bytes: what a text search needs.
func (r *Reader) ReadText(queue string, m broker.Message) string {
	return r.read(queue, m, true).Text()
}

func (r *Reader) read(queue string, m broker.Message, textOnly bool) Decoded {
	in := Input{ContentType: m.Properties.ContentType, ContentEncoding: m.Properties.ContentEncoding, Type: m.Properties.Type, Body: m.Body, textOnly: textOnly}
	switch c := m.Headers["compression"].(type) {
	case string:
		in.Compression = c
	case []byte:
		in.Compression = string(c)
	}
	if r != nil {
		in.Schemas, in.Rule = r.Schemas, r.Default
		var name string
		switch v := m.Headers[r.TypeHeader].(type) {
		case string:
			name = v
		case []byte:
			name = string(v)
		}
		if r.TypeHeader != "" && name != "" {
			in.Type, in.TypeFrom = name, "header "+r.TypeHeader
		}
		for _, q := range r.Queues {
			if ok, _ := path.Match(q.Pattern, queue); ok || q.Pattern == queue {
				in.Rule = q.Rule
				break
			}
		}
	}
	return Decode(in)
}
