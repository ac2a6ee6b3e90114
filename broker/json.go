package broker

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// messageJSON is the lossless JSON form of a Message: -o json prints it and
// export writes one per line.
type messageJSON struct {
	ID           string          `json:"id"`
	Exchange     string          `json:"exchange"`
	RoutingKey   string          `json:"routing_key"`
	Redelivered  bool            `json:"redelivered,omitempty"`
	Properties   propertiesJSON  `json:"properties"`
	Headers      json.RawMessage `json:"headers"`
	BodyEncoding string          `json:"body_encoding"` // "utf8" or "base64"
	Body         string          `json:"body"`
}

// propertiesJSON shadows Properties.Timestamp (the shallower field wins in
// encoding/json) so that a timestamp RFC 3339 cannot write survives.
type propertiesJSON struct {
	Properties
	Timestamp *wireTime `json:"timestamp,omitempty"`
}

// wireTime is an AMQP timestamp: whole seconds, 64 bits. It is written as
// RFC 3339 text, or as a number of seconds when the year has no four-digit
// form (producers that put milliseconds there).
type wireTime struct{ time.Time }

func (w wireTime) MarshalJSON() ([]byte, error) {
	if y := w.UTC().Year(); y < 0 || y > 9999 {
		return []byte(strconv.FormatInt(w.Unix(), 10)), nil
	}
	return json.Marshal(w.UTC().Format(time.RFC3339))
}

func (w *wireTime) UnmarshalJSON(b []byte) error {
	if sec, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		w.Time = time.Unix(sec, 0)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: want RFC 3339 text or Unix seconds")
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("timestamp %q: want RFC 3339 text or Unix seconds", Truncate(s, 40))
	}
	w.Time = time.Unix(t.Unix(), 0) // as amqp091-go decodes it: seconds, local zone
	return nil
}

// checkUTF8 refuses text the JSON form cannot carry: encoding/json would
// silently replace the bad bytes, and the export would not be the message.
func checkUTF8(m Message) error {
	fields := append([]namedString{{"exchange", m.Exchange}, {"routing_key", m.RoutingKey}}, shortStrings(m.Properties)...)
	for _, f := range fields {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s %q is not valid UTF-8", ErrBadValue, f.name, f.v)
		}
	}
	return nil
}

// MarshalJSON writes the lossless form: typed headers, and the body as text
// when it is valid UTF-8, base64 otherwise. Text the form cannot carry
// exactly (a property or header name that is not UTF-8) is an error.
func (m Message) MarshalJSON() ([]byte, error) {
	if err := checkUTF8(m); err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.ID(), err)
	}
	headers := json.RawMessage("null") // no headers on the wire, not an empty table
	if m.Headers != nil {
		var err error
		if headers, err = EncodeTable(m.Headers); err != nil {
			return nil, fmt.Errorf("encode message %s: %w", m.ID(), err)
		}
	}
	out := messageJSON{
		ID:          m.ID(),
		Exchange:    m.Exchange,
		RoutingKey:  m.RoutingKey,
		Redelivered: m.Redelivered,
		Properties:  propertiesJSON{Properties: m.Properties},
		Headers:     headers,
	}
	if !m.Properties.Timestamp.IsZero() {
		out.Properties.Timestamp = &wireTime{m.Properties.Timestamp}
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
	props := in.Properties.Properties
	if in.Properties.Timestamp != nil {
		props.Timestamp = in.Properties.Timestamp.Time
	}
	*m = Message{
		Properties:  props,
		Headers:     headers,
		Body:        body,
		Exchange:    in.Exchange,
		RoutingKey:  in.RoutingKey,
		Redelivered: in.Redelivered,
	}
	return nil
}
