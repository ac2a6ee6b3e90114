package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// ImportOptions say which export to publish back, and where.
type ImportOptions struct {
	// File is the export file; "-" reads In.
	File string
	In   io.Reader
	// To overrides the destination; by default each message goes back to
	// the queue it was exported from (default exchange, routing key = that
	// queue).
	To       *retrycore.Destination
	Rate     float64
	Window   int
	Progress func(Event)
}

// Import publishes an export back, confirmed and mandatory, exactly as it
// was exported (body, properties, typed headers; x-delivery-count, which
// the broker owns, is left out). The whole file is checked first: a line
// that is not an exported message is an error naming the line, and nothing
// is published.
func (s *Session) Import(ctx context.Context, o ImportOptions) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	data, name, err := importSource(o)
	if err != nil {
		return Result{}, err
	}
	defer data.Close()
	n, err := scanImport(data, name, o.To, false, nil)
	if err != nil {
		return Result{}, err
	}
	if _, err := data.Seek(0, io.SeekStart); err != nil {
		return Result{}, fmt.Errorf("import %s: %w", name, err)
	}
	r, err := s.newRun(EventImported, o.Rate, o.Window, o.Progress)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	pub, err := newPublisher(ctx, s, r.window)
	if err != nil {
		return Result{}, err
	}
	defer pub.close()
	abs := name
	if a, err := filepath.Abs(name); err == nil && name != "-" {
		abs = a
	}
	userNoted := false
	entry := &AuditEntry{Action: "import", File: abs}
	err = r.execute(ctx, pub, func(ctx context.Context, jobs chan<- *job) error {
		_, err := scanImport(data, name, o.To, true, func(line int, m broker.Message, dest retrycore.Destination) error {
			pb := m.Publishing()
			// The broker's counts of the queue it was exported from
			// (x-delivery-count, x-acquired-count) are stale in another.
			if _, ok := pb.Headers[retrycore.HeaderDeliveryCount]; ok || pb.Headers[retrycore.HeaderAcquiredCount] != nil {
				pb.Headers = broker.CloneTable(pb.Headers)
				broker.DropDeliveryHeaders(pb.Headers)
			}
			// The broker refuses (406, closing the channel) a user_id that
			// is not the connection's own user.
			if pb.UserId != "" && pb.UserId != s.amqpUser {
				if !userNoted {
					userNoted = true
					r.tally.note(Note{Kind: NoteUserIDLeftOut, UserID: pb.UserId, ConnUser: s.amqpUser})
				}
				pb.UserId = ""
			}
			id := fmt.Sprintf("%s (line %d)", m.ID(), line)
			r.tally.chosen(id)
			j := &job{id: id, dest: dest, pub: pb, entry: entry, auditID: m.ID()}
			select {
			case jobs <- j:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		return err
	})
	if herr := r.haltErr(); herr != nil {
		err = fmt.Errorf("stopped: %w", herr)
	}
	res := r.tally.finish()
	if err == nil && res.Done+res.Failed < n {
		err = fmt.Errorf("import %s: %d of %d messages handled", name, res.Done+res.Failed, n)
	}
	return res, err
}

func (o ImportOptions) check() error {
	if err := CheckDestination(o.To, ""); err != nil {
		return err
	}
	return checkRateWindow(o.Rate, o.Window)
}

type readSeekCloser interface {
	io.ReadSeeker
	io.Closer
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// importSource opens the file; "-" reads all of In into memory (the file
// is read twice: checked, then published).
func importSource(o ImportOptions) (readSeekCloser, string, error) {
	if o.File == "" || o.File == "-" {
		if o.In == nil {
			return nil, "", errors.New("import: no file given")
		}
		b, err := io.ReadAll(o.In)
		if err != nil {
			return nil, "", fmt.Errorf("import: read stdin: %w", err)
		}
		return nopCloser{bytes.NewReader(b)}, "-", nil
	}
	f, err := os.Open(o.File)
	if err != nil {
		return nil, "", fmt.Errorf("import: %w", err)
	}
	return f, o.File, nil
}

// importLine is what an import line may be: an export line (with
// "message") or the bare message JSON (`show -o json` and export both
// write the former).
type importLine struct {
	Queue   string          `json:"queue"`
	Message json.RawMessage `json:"message"`
	Body    *string         `json:"body"`
}

// scanImport reads every line and calls each (when set) with the message
// and its destination; without each it only checks the file. publishing
// says whether each publishes (for the error's words). It returns the
// number of messages; a file without any is an error.
func scanImport(r io.Reader, name string, to *retrycore.Destination, publishing bool, each func(int, broker.Message, retrycore.Destination) error) (int, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	for line := 1; ; line++ {
		raw, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return n, fmt.Errorf("import %s: %w", name, rerr)
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) > 0 {
			m, dest, err := parseImportLine(trimmed, to, rerr != nil)
			if err != nil {
				return n, fmt.Errorf("%w %s: line %d: %w; %s", ErrBadImport, name, line, err, publishedNote(publishing))
			}
			n++
			if each != nil {
				if err := each(line, m, dest); err != nil {
					return n, err
				}
			}
		}
		if rerr != nil {
			if n == 0 {
				return 0, fmt.Errorf("%w %s: no messages in it (an empty file); nothing was published", ErrBadImport, name)
			}
			return n, nil
		}
	}
}

// publishedNote says what a bad line means for the messages before it:
// the whole file is checked before anything is published, so only a file
// that changed between the check and the publishing pass stops half-way.
func publishedNote(publishing bool) string {
	if publishing {
		return "nothing after it was published"
	}
	return "nothing was published"
}

func parseImportLine(b []byte, to *retrycore.Destination, last bool) (broker.Message, retrycore.Destination, error) {
	var probe importLine
	if err := json.Unmarshal(b, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
			if last && !json.Valid(b) {
				return broker.Message{}, retrycore.Destination{}, fmt.Errorf("not JSON (%v): the file looks truncated", err)
			}
			return broker.Message{}, retrycore.Destination{}, fmt.Errorf("not JSON: %v", err)
		}
		return broker.Message{}, retrycore.Destination{}, fmt.Errorf("not an exported message: %s", jsonProblem(err))
	}
	msgJSON := probe.Message
	if len(msgJSON) == 0 || string(msgJSON) == "null" {
		if probe.Body == nil {
			return broker.Message{}, retrycore.Destination{}, errors.New(`not an exported message (no "message" or "body")`)
		}
		msgJSON = b
	}
	var m broker.Message
	if err := json.Unmarshal(msgJSON, &m); err != nil {
		return broker.Message{}, retrycore.Destination{}, errors.New(jsonProblem(err))
	}
	if path := broker.NonFinite(m.Headers); path != "" {
		return broker.Message{}, retrycore.Destination{}, fmt.Errorf("header %s is not a finite number (NaN or ±Inf), which RabbitMQ refuses by closing the connection", path)
	}
	// Found here, before anything is published, rather than as a lost
	// channel or connection half-way through the file.
	if err := broker.Publishable(m); err != nil {
		return broker.Message{}, retrycore.Destination{}, err
	}
	switch {
	case to != nil:
		return m, *to, nil
	case probe.Queue != "":
		if len(probe.Queue) > broker.MaxShortString { // the routing key to it
			return broker.Message{}, retrycore.Destination{}, fmt.Errorf("the queue name is %d bytes; %w", len(probe.Queue), retrycore.ErrNameTooLong)
		}
		return m, retrycore.Destination{Exchange: "", RoutingKey: probe.Queue}, nil
	}
	return m, retrycore.Destination{}, ErrNoImportDestination
}

// jsonProblem words a decoding error in the file's terms: encoding/json's
// type errors name Go types ("Go struct field importLine.queue of type
// string").
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	want := "another type"
	if te.Type != nil {
		switch te.Type.Kind() {
		case reflect.String:
			want = "text"
		case reflect.Bool:
			want = "true or false"
		case reflect.Uint8, reflect.Uint16, reflect.Uint32:
			// priority and delivery_mode: "a number" would not say what
			// is wrong with 300 or 1.5.
			want = fmt.Sprintf("a whole number 0–%d", uint64(1)<<te.Type.Bits()-1)
		case reflect.Int8, reflect.Int16, reflect.Int32:
			want = fmt.Sprintf("a whole number %d–%d", -(int64(1) << (te.Type.Bits() - 1)), int64(1)<<(te.Type.Bits()-1)-1)
		case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
			want = "a whole number"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice, reflect.Array:
			want = "a list"
		}
	}
	if te.Field == "" {
		return fmt.Sprintf("a JSON %s where %s belongs", te.Value, want)
	}
	// Drop the names of embedded Go structs ("properties.Properties.message_id").
	var path []string
	for _, seg := range strings.Split(te.Field, ".") {
		if seg != "" && !unicode.IsUpper(rune(seg[0])) {
			path = append(path, seg)
		}
	}
	return fmt.Sprintf("%q is a JSON %s; want %s", strings.Join(path, "."), te.Value, want)
}

// ImportPlan is what Import would publish.
type ImportPlan struct {
	File         string       `json:"file"`
	Messages     int          `json:"messages"`
	Destinations []ImportDest `json:"destinations"`
}

// ImportDest counts the messages going to one destination.
type ImportDest struct {
	retrycore.Destination
	Messages int `json:"messages"`
}

// PlanImport checks an import file (every line) and counts the messages
// per destination, publishing nothing.
func PlanImport(o ImportOptions) (ImportPlan, error) {
	if err := o.check(); err != nil {
		return ImportPlan{}, err
	}
	data, name, err := importSource(o)
	if err != nil {
		return ImportPlan{}, err
	}
	defer data.Close()
	plan := ImportPlan{File: name}
	idx := map[retrycore.Destination]int{}
	n, err := scanImport(data, name, o.To, false, func(_ int, _ broker.Message, d retrycore.Destination) error {
		i, ok := idx[d]
		if !ok {
			i = len(plan.Destinations)
			idx[d] = i
			plan.Destinations = append(plan.Destinations, ImportDest{Destination: d})
		}
		plan.Destinations[i].Messages++
		return nil
	})
	plan.Messages = n
	return plan, err
}
