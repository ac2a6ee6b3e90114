package replay

import (
	"context"
	"errors"
	"io"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// DeleteOptions say which messages to remove from a parking lot.
type DeleteOptions struct {
	Queue    string
	Select   Selector
	Progress func(Event)
}

// ExportOptions say what to export and where.
type ExportOptions struct {
	Queue  string
	Select Selector // empty: every message
	// File is the export file (created 0600); empty writes to Out.
	File string
	Out  io.Writer
	// Remove acks each message only after its line was written and the
	// file fsynced (needs File).
	Remove   bool
	Progress func(Event)
}

// ImportOptions say which export to publish back, and where.
type ImportOptions struct {
	File string
	In   io.Reader // used when File is "-"
	// To overrides the destination; by default each message goes to the
	// queue it was exported from (default exchange).
	To       *retrycore.Destination
	Rate     float64
	Window   int
	Progress func(Event)
}

// EditDraft is a parked message whose body is being edited in a file.
type EditDraft struct {
	Queue       string
	ID          string
	Path        string // the body, in a 0600 temporary file
	ContentType string
	Original    broker.Message
}

var errTODO = errors.New("not implemented yet")

// Delete removes the chosen messages (audit entry first).
func (s *Session) Delete(ctx context.Context, o DeleteOptions) (Result, error) { return Result{}, errTODO }

// Export writes the chosen messages as JSON Lines.
func (s *Session) Export(ctx context.Context, o ExportOptions) (Result, error) { return Result{}, errTODO }

// Import publishes an export back, confirmed.
func (s *Session) Import(ctx context.Context, o ImportOptions) (Result, error) { return Result{}, errTODO }

// PrepareEdit writes a parked message's body to a temporary file.
func (s *Session) PrepareEdit(ctx context.Context, queue, id string) (*EditDraft, error) {
	return nil, errTODO
}

// FinishEdit validates the edited body and replays the edited message.
func (s *Session) FinishEdit(ctx context.Context, d *EditDraft, o Options) (Result, error) {
	return Result{}, errTODO
}
