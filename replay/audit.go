package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// AuditUser says who acted: the operating-system user and the AMQP user
// (never a password).
type AuditUser struct {
	OS   string `json:"os"`
	AMQP string `json:"amqp"`
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time      time.Time              `json:"time"`
	User      AuditUser              `json:"user"`
	Action    string                 `json:"action"` // replay | edit | delete | export-remove | import | protect
	Queue     string                 `json:"from_queue,omitempty"`
	To        *retrycore.Destination `json:"to,omitempty"`
	File      string                 `json:"file,omitempty"`   // export and import
	Policy    string                 `json:"policy,omitempty"` // protect: the policy put
	MessageID string                 `json:"message_id"`
	ReplayID  string                 `json:"replay_id,omitempty"`
	// Run is the replay run (NewRunID) the entry belongs to; every copy it
	// sent carries it in x-replay-run, so a message that came back links
	// to its run (Session.RunStatus).
	Run string `json:"run,omitempty"`
	// Result is "ok" (done: the parked copy was removed after the entry
	// was on disk), or what went wrong: "unroutable", "nacked", "failed",
	// "not-removed" (sent, but the parked copy could not be acked).
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

// Audit results.
const (
	resultOK         = "ok"
	resultUnroutable = "unroutable"
	resultNacked     = "nacked"
	resultFailed     = "failed"
	resultNotRemoved = "not-removed"
)

// DefaultAuditPath is $PARKINGLOT_AUDIT_LOG, or
// $XDG_STATE_HOME/parkinglot/audit.jsonl (~/.local/state/parkinglot/...).
func DefaultAuditPath() string {
	if p := os.Getenv("PARKINGLOT_AUDIT_LOG"); p != "" {
		return p
	}
	return StatePath("audit.jsonl")
}

// StatePath is where parkinglot keeps a state file of this name:
// $XDG_STATE_HOME/parkinglot/NAME (~/.local/state/parkinglot/NAME), or
// without a home the temporary directory's parkinglot-NAME.
func StatePath(name string) string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "parkinglot-"+name)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "parkinglot", name)
}

// auditLog appends entries and fsyncs them before the caller acks the
// parked copies they describe. Writes of one batch go out in one write(2)
// on an O_APPEND file, so concurrent parkinglot processes do not interleave
// lines.
type auditLog struct {
	mu   sync.Mutex
	path string
	f    *os.File
	user AuditUser
	// buf holds a batch's lines (appendAuditLine).
	buf []byte
}

func (s *Session) openAudit() (*auditLog, error) {
	path := s.AuditPath
	if path == "" {
		path = DefaultAuditPath()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	// An entry's fsync makes it durable, not a new file's name: the folder
	// is synced once, before the first removal.
	if err := syncDir(filepath.Dir(path)); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("audit log %s: fsync its folder: %w", path, err)
	}
	// A file made by hand may be readable by others; the log names queues
	// and message ids, so keep it private.
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		_ = f.Chmod(0o600)
	}
	return &auditLog{path: path, f: f, user: AuditUser{OS: s.osUser, AMQP: s.amqpUser}}, nil
}

// commit writes the entries and fsyncs the file: one fsync per batch of
// confirms (group commit), not per message.
func (a *auditLog) commit(entries []AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.encode(entries)
	if _, err := a.f.Write(a.buf); err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("audit log %s: fsync: %w", a.path, err)
	}
	return nil
}

// encode puts the entries' lines in a.buf.
func (a *auditLog) encode(entries []AuditEntry) {
	a.buf = a.buf[:0]
	for i := range entries {
		e := &entries[i]
		e.User = a.user
		e.Error = broker.RedactText(e.Error)
		a.buf = appendAuditLine(a.buf, e)
	}
}

func (a *auditLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}
