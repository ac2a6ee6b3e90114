package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the TUI answers, in one place. Screens match with
// key.Matches and tell the help bar which of these apply to them.
//
// `g` is group-by-error (the key for it), so the k9s/vim "g/gg = top"
// is not available: top is home or `<`, bottom is end, `G` or `>`.
type KeyMap struct {
	Up, Down         key.Binding
	Left, Right      key.Binding // scroll a message sideways
	PageUp, PageDown key.Binding
	Top, Bottom      key.Binding
	Open             key.Binding
	Back             key.Binding
	Quit             key.Binding
	ForceQuit        key.Binding
	Help             key.Binding
	Refresh          key.Binding

	Filter    key.Binding
	Search    key.Binding // the queues screen's search of every parking lot
	Sort      key.Binding
	Reverse   key.Binding
	Group     key.Binding
	Select    key.Binding
	SelectAll key.Binding

	ReplayOne  key.Binding
	ReplayMany key.Binding
	Edit       key.Binding
	Delete     key.Binding
	Export     key.Binding
	Import     key.Binding
	RawBody    key.Binding // the message screen: the body's raw bytes as hex, or as read

	// Dialogs.
	Confirm      key.Binding
	Cancel       key.Binding
	NextField    key.Binding
	PrevField    key.Binding
	ToggleTarget key.Binding
	EditAgain    key.Binding
	CancelRun    key.Binding // stops a running action
	Discard      key.Binding // leaves an edit's draft
	Close        key.Binding // closes a finished action's dialog
	// At the end of a canary step none of whose messages came back.
	CanaryGo   key.Binding
	CanaryStop key.Binding

	// Jobs: an action sent to the background, the jobs screen, and the
	// question a quit asks while one runs.
	Background key.Binding
	Jobs       key.Binding
	CancelJob  key.Binding
	QuitYes    key.Binding
	QuitNo     key.Binding
}

// DefaultKeyMap returns the keys described in the README's key table.
func DefaultKeyMap() *KeyMap {
	return &KeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:      key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "scroll left")),
		Right:     key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "scroll right")),
		PageUp:    key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/ctrl+b/ctrl+u", "page up")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d"), key.WithHelp("pgdn/ctrl+f/ctrl+d", "page down")),
		Top:       key.NewBinding(key.WithKeys("home", "<"), key.WithHelp("home/<", "top")),
		Bottom:    key.NewBinding(key.WithKeys("end", "G", ">"), key.WithHelp("end/G/>", "bottom")),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Refresh:   key.NewBinding(key.WithKeys("ctrl+r", "f5"), key.WithHelp("ctrl+r/F5", "reload")),

		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Search:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search every parking lot")),
		Sort:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Reverse:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		Group:     key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "group")),
		Select:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "select")),
		SelectAll: key.NewBinding(key.WithKeys("ctrl+a"), key.WithHelp("ctrl+a", "select all shown")),

		ReplayOne:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "replay")),
		ReplayMany: key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay selection/filtered/group")),
		Edit:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit")),
		Delete:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "delete")),
		Export:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "export")),
		RawBody:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "raw bytes/decoded")),
		Import:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "import an export file")),

		Confirm:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),
		Cancel:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		NextField:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		PrevField:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		ToggleTarget: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "origin / failed queue only")),
		EditAgain:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit again")),
		CancelRun:    key.NewBinding(key.WithKeys("esc", "c"), key.WithHelp("esc/c", "cancel")),
		Discard:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "discard")),
		Close:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "close")),
		CanaryGo:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go on: the next canary step or the rest")),
		CanaryStop:   key.NewBinding(key.WithKeys("s", "esc"), key.WithHelp("s/esc", "stop: the rest stay parked")),

		Background: key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "run in the background")),
		Jobs:       key.NewBinding(key.WithKeys("J"), key.WithHelp("J", "jobs")),
		CancelJob:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel the job")),
		QuitYes:    key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "quit: stop the jobs")),
		QuitNo:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "stay")),
	}
}

// replayShort is r and R as one help item, for the short help bar.
func (k *KeyMap) replayShort() key.Binding {
	return key.NewBinding(key.WithKeys("r", "R"), key.WithHelp("r/R", "replay"))
}

// pageDownShort is page down under its first key alone, for a short help
// bar that has no room for the others; ? names them all.
func (k *KeyMap) pageDownShort() key.Binding {
	b := k.PageDown
	b.SetHelp("pgdn", b.Help().Desc)
	return b
}

// described is b with a longer description, for the full help.
func described(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// keyHelp is a help.KeyMap built from slices, so each screen and dialog
// state can say which keys apply without a type of its own.
type keyHelp struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h keyHelp) ShortHelp() []key.Binding  { return h.short }
func (h keyHelp) FullHelp() [][]key.Binding { return h.full }
