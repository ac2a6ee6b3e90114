package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// ShowBodyLimit is how much of a body show prints.
const ShowBodyLimit = 64 << 10

// shownMessage is `show -o json`: the lossless message (the same form as an
// export line, so it can be imported) with its decoded facts and origin.
type shownMessage struct {
	Queue     string            `json:"queue"`
	Message   json.RawMessage   `json:"message"`
	Facts     retrycore.Facts   `json:"facts"`
	Origin    *retrycore.Origin `json:"origin,omitempty"`
	OriginErr string            `json:"origin_error,omitempty"`
	ParkedAt  time.Time         `json:"parked_at,omitzero"`
	Group     string            `json:"group,omitempty"`
	// Decoded is the body decoded (JSON, MessagePack), beside the
	// lossless body in message; BodyReading says how it was read.
	Decoded     any          `json:"decoded,omitempty"`
	BodyReading *bodyReading `json:"body_reading,omitempty"`
}

// bodyReading is how show read a body (README, Message bodies).
type bodyReading struct {
	Format          string `json:"format,omitempty"`
	FormatFrom      string `json:"format_from,omitempty"`
	Compression     string `json:"compression,omitempty"`
	CompressionFrom string `json:"compression_from,omitempty"`
	Error           string `json:"error,omitempty"`
}

// MessageJSON is the one-line JSON `show -o json` prints.
func MessageJSON(bodies *body.Reader, queue string, m broker.Message, s replay.Summary) ([]byte, error) {
	raw, err := m.MarshalJSON() // not json.Marshal: its error would name Go types
	if err != nil {
		return nil, err
	}
	out := shownMessage{Queue: queue, Message: raw, Facts: s.Facts, Origin: s.Origin, OriginErr: s.OriginErr, ParkedAt: s.ParkedAt, Group: s.Group}
	if d := bodies.Read(queue, m); d.Format != body.None || d.Compression != "" || d.Err != nil {
		out.BodyReading = &bodyReading{Format: string(d.Format), FormatFrom: d.FormatFrom, Compression: d.Compression, CompressionFrom: d.CompressionFrom}
		if d.Err != nil {
			out.BodyReading.Error = d.Err.Error()
		}
		if d.Format != body.None {
			out.Decoded = body.JSONValue(d.Value)
		}
	}
	return json.Marshal(out)
}

// WriteMessage prints one message for people: a summary, properties,
// headers (x-last-error and x-retry-count first), the death history as a
// timeline, and the body (JSON pretty-printed, text as is, binary as a hex
// dump; the first 64 KiB).
func WriteMessage(w io.Writer, bodies *body.Reader, queue string, m broker.Message, s replay.Summary, now time.Time) error {
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	f := s.Facts
	fmt.Fprintf(&b, "Message   %s  in %s\n", format.Name(s.ID), format.Name(queue))
	if s.Origin != nil {
		fmt.Fprintf(&b, "Origin    %s  (%s)\n", format.Destination(s.Origin.Destination), s.Origin.Source)
		if s.Origin.Queue != "" {
			fmt.Fprintf(&b, "Failed in %s\n", format.Name(s.Origin.Queue))
		}
	} else {
		fmt.Fprintf(&b, "Origin    ? %s\n", format.OneLine(s.OriginErr))
	}
	if f.Error != "" {
		fmt.Fprintf(&b, "Error     %s  (%s)\n", format.OneLine(f.Error), f.ErrorSource)
	}
	if f.ErrorType != "" {
		fmt.Fprintf(&b, "Type      %s\n", format.OneLine(f.ErrorType))
	}
	fmt.Fprintf(&b, "Attempts  %d", f.Attempts)
	if f.AttemptsSource != "" {
		fmt.Fprintf(&b, "  (%s)", f.AttemptsSource)
	}
	b.WriteString("\n")
	if !s.ParkedAt.IsZero() {
		fmt.Fprintf(&b, "Parked    %s (%s ago)", format.Time(s.ParkedAt), format.Age(s.Age(now)))
		if f.FailureKind != "" {
			fmt.Fprintf(&b, "  %s", format.Name(f.FailureKind))
		}
		b.WriteString("\n")
	}
	if f.CameBack {
		fmt.Fprintf(&b, "Came back %s\n", format.CameBack(f, now))
	} else if f.ReplayCount > 0 {
		fmt.Fprintf(&b, "Replayed  %d time(s), last %s\n", f.ReplayCount, format.Time(f.ReplayedAt))
	}
	// What the broker counts, under its own header names, with what each
	// counts (it differs by version: format.DeliveryCountMeaning); neither
	// is attempts.
	if f.DeliveryCount != nil {
		fmt.Fprintf(&b, "Counted   %s %d  (%s)\n", retrycore.HeaderDeliveryCount, *f.DeliveryCount, format.DeliveryCountMeaning)
	}
	if f.AcquiredCount != nil {
		fmt.Fprintf(&b, "Counted   %s %d  (%s)\n", retrycore.HeaderAcquiredCount, *f.AcquiredCount, format.AcquiredCountMeaning)
	}
	for _, p := range f.Problems {
		fmt.Fprintf(&b, "Odd       %s\n", p)
	}

	b.WriteString("\nProperties\n")
	writeProperties(&b, m.Properties)
	if len(m.Headers) > 0 {
		b.WriteString("\nHeaders\n")
		writeHeaders(&b, m.Headers)
	}
	if len(f.Deaths) > 0 {
		b.WriteString("\nDeath history (newest first)\n")
		writeDeaths(&b, f)
	}
	if f.StackTrace != "" {
		b.WriteString("\nStack trace\n")
		for _, line := range strings.Split(strings.TrimRight(retrycore.StripControl(format.Cut(f.StackTrace, 8192)), "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	fmt.Fprintf(&b, "\nBody (%s, %d bytes)\n", orDash(format.Name(m.Properties.ContentType)), len(m.Body))
	b.WriteString(FormatBody(bodies.Read(queue, m), m.Properties.ContentType, ShowBodyLimit))
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// writeProperties prints the properties; their values are the
// producer's, so each is escaped (format.Name) before it reaches a
// terminal.
func writeProperties(b *strings.Builder, p broker.Properties) {
	for _, f := range format.Properties(p) {
		fmt.Fprintf(b, "  %-17s %s\n", f.Name, format.Name(f.Value))
	}
}

func writeHeaders(b *strings.Builder, h amqp.Table) {
	order := format.HeaderOrder(h)
	budget := ShowBodyLimit
	for _, k := range order {
		if !writeHeader(b, 1, k, h[k], &budget) {
			fmt.Fprintf(b, "  … (headers longer than %d KiB; export the message for all of it)\n", ShowBodyLimit>>10)
			return
		}
	}
}

// maxShownDepth bounds how deep nested tables are expanded; deeper ones
// are shown on one line.
const maxShownDepth = 16

// writeHeader prints one header: a table (rascal's, for one) as its own
// indented block of keys, in full, so nothing it holds is cut; any other
// value on one line (format.Value). budget is what may still be written
// (the 64 KiB rule of the body); it reports false when it ran out.
func writeHeader(b *strings.Builder, depth int, k string, v any, budget *int) bool {
	if *budget <= 0 {
		return false
	}
	indent := strings.Repeat("  ", depth)
	name := fmt.Sprintf("%s%-*s", indent, max(30-len(indent), 1), format.OneLine(format.Key(k)))
	t, isTable := v.(amqp.Table)
	if !isTable || depth >= maxShownDepth || len(t) == 0 {
		line := fmt.Sprintf("%s %-9s %s\n", name, broker.TypeName(v), format.Value(v))
		*budget -= len(line)
		b.WriteString(line)
		return true
	}
	word := "keys"
	if len(t) == 1 {
		word = "key"
	}
	line := fmt.Sprintf("%s %-9s (%d %s)\n", name, broker.TypeName(v), len(t), word)
	*budget -= len(line)
	b.WriteString(line)
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !writeHeader(b, depth+1, k, t[k], budget) {
			return false
		}
	}
	return true
}

func writeDeaths(b *strings.Builder, f retrycore.Facts) {
	// Newest first, as retrycore.Deaths orders them: the latest failure is
	// the one a reader looks for.
	for _, d := range f.Deaths {
		when := "(no time)"
		if !d.Time.IsZero() {
			when = format.Time(d.Time)
		}
		// x-death's strings are any bytes a producer sent.
		fmt.Fprintf(b, "  %s  %-14s %s", when, format.Name(d.Reason), format.Name(d.Queue))
		if d.Exchange != "" || len(d.RoutingKeys) > 0 {
			keys := make([]string, len(d.RoutingKeys))
			for i, k := range d.RoutingKeys {
				keys[i] = format.Name(k)
			}
			fmt.Fprintf(b, "  via %s [%s]", orDefault(d.Exchange), strings.Join(keys, ", "))
		}
		if d.Count > 1 {
			fmt.Fprintf(b, "  ×%d", d.Count)
		}
		if d.OriginalExpiration != "" {
			fmt.Fprintf(b, "  expiration %sms", format.Name(d.OriginalExpiration))
		}
		b.WriteString("\n")
	}
	if fd := f.FirstDeath; fd.Queue != "" {
		fmt.Fprintf(b, "  first death: %s in %s (exchange %s)\n", format.Name(fd.Reason), format.Name(fd.Queue), orDefault(fd.Exchange))
	}
}

func orDefault(ex string) string {
	if ex == "" {
		return "(default)"
	}
	return format.Name(ex)
}

// FormatBody renders a body for people, by the rule of format.ReadBody:
// its notes first (what was undone to show it, or why it is shown as it
// is), then JSON and MessagePack indented, text as is, anything else as a
// hex dump; at most limit bytes, with a note when cut.
func FormatBody(d body.Decoded, contentType string, limit int) string {
	r := format.ReadBody(d, contentType, limit)
	var out string
	for _, n := range r.Notes {
		out += "(" + n + ")\n"
	}
	switch r.Kind {
	case format.BodyEmpty:
		out += "(empty)\n"
	case format.BodyJSON, format.BodyMessagePack, format.BodyProtobuf, format.BodyAvro:
		var buf bytes.Buffer
		_ = json.Indent(&buf, r.Shown, "", "  ") // ReadBody gives valid JSON for these
		out += buf.String() + "\n"
	case format.BodyText:
		out += string(r.Shown)
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
	default:
		out += hex.Dump(r.Shown)
	}
	if r.Cut {
		out += fmt.Sprintf("… (first %d of %d bytes shown; export the message for all of it)\n", limit, r.Size)
	}
	return out
}
