package broker

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// messageJSON is the lossless JSON form of a Message: -o json prints it and
// export writes one per line.
type messageJSON struct {
	ID           string          `json:"id"`
	Exchange     string          `json:"exchange"`
	RoutingKey   string          `json:"routing_key"`
	Redelivered  bool            `json:"redelivered,omitempty"`
	Properties   Properties      `json:"properties"`
	Headers      json.RawMessage `json:"headers"`
	BodyEncoding string          `json:"body_encoding"` // "utf8" or "base64"
	Body         string          `json:"body"`
}

// MarshalJSON writes the lossless form: typed headers, and the body as text
// when it is valid UTF-8, base64 otherwise.
func (m Message) MarshalJSON() ([]byte, error) {
	headers, err := EncodeTable(m.Headers)
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.ID(), err)
	}
	out := messageJSON{
		ID:          m.ID(),
		Exchange:    m.Exchange,
		RoutingKey:  m.RoutingKey,
		Redelivered: m.Redelivered,
		Properties:  m.Properties,
		Headers:     headers,
	}
	if utf8.Valid(m.Body) {
		out.BodyEncoding, out.Body = "utf8", string(m.Body)
	} else {
		out.BodyEncoding, out.Body = "base64", base64.StdEncoding.EncodeToString(m.Body)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (m *Message) UnmarshalJSON(data []byte) error {
	var in messageJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("not a parkinglot message: %w", err)
	}
	var headers map[string]any
	if len(in.Headers) > 0 && string(in.Headers) != "null" {
		t, err := DecodeTable(in.Headers)
		if err != nil {
			return err
		}
		headers = t
	}
	var body []byte
	switch in.BodyEncoding {
	case "utf8", "":
		body = []byte(in.Body)
	case "base64":
		b, err := base64.StdEncoding.DecodeString(in.Body)
		if err != nil {
			return fmt.Errorf("body: bad base64: %w", err)
		}
		body = b
	default:
		return fmt.Errorf("body_encoding %q is not utf8 or base64", in.BodyEncoding)
	}
	*m = Message{
		Properties:  in.Properties,
		Headers:     headers,
		Body:        body,
		Exchange:    in.Exchange,
		RoutingKey:  in.RoutingKey,
		Redelivered: in.Redelivered,
	}
	return nil
}
