// Package ui is parkinglot's terminal UI: a bubbletea program with one
// root model and one sub-model per screen.
//
// # Files
//
// Each type lives in a file named after it. The root model, Model
// (model.go, model_view.go), holds the navigation stack, the dialog on
// top of it, the status bar and the jobs (jobs.go). The screens are
// queuesScreen (queues_screen.go), messagesScreen (messages_screen.go, its
// view, its action keys and its selection in selection.go), messageScreen
// (message_screen.go), searchScreen (search.go) and jobsScreen
// (jobs_screen.go); each implements screen (screen.go, with the
// navigation messages the root obeys). Every screen and dialog shares one
// common value
// (common.go): the body's size, the Styles (styles.go, where every colour
// is), the KeyMap (keys.go), the Backend and the program's context.
//
// A dialog is a shared part — the state machine, the progress bar, the
// result and the status line (dialog.go, dialog_view.go, dialog_result.go)
// — and one action per kind, holding only its fields and its texts:
// replay (dialog_replay.go), edit (dialog_edit.go), delete
// (dialog_delete.go), export (dialog_export.go) and import
// (dialog_import.go). Replay and edit share the route: the destination,
// the target and the plan (dialog_route.go); export and import share the
// file field (dialog_file.go); replay alone has the canary
// (dialog_canary.go).
//
// # The backend
//
// The TUI does no AMQP or HTTP of its own: every call to the broker goes
// through Backend, inside a tea.Cmd (cmds.go), and comes back as a typed
// message; Update stores it and View draws it. Workers that may hold
// messages are counted (workers.go), so quitting waits until each gave
// its messages back. The real Backend,
// sessionBackend (session_backend.go), is the only code that calls
// replay's operations; model tests use a fake. The other files use
// replay's values (Summary, Result, Event, IDSet) and its pure rules
// (ParseRamp, CheckDestination, ParseQuery) directly, so that a rule the
// command line applies too is written once.
//
// # Rules every screen keeps
//
// Nothing changes before a dialog has said what will happen — how many
// messages, which ones, where they go — and the person confirmed. The
// messages are fixed when the dialog opens: what was seen is what is
// acted on. The count is of messages, not rows — an id takes every copy
// that carries it — and the action takes no more than it (the request's
// Limit), so a copy parked since stays.
//
// A value a message carries is shown under its header's name; a value
// parkinglot derived (an error from x-death, the attempts) is shown under
// a label of its own that says where it came from, so nobody takes it for
// a header the application set.
//
// A canary replay sends its first messages and watches the parking lot
// for them before the rest follow: a fix that does not hold costs a few
// messages. When a step ends with none of its messages back, the dialog
// asks before it goes on.
//
// Without colour (NO_COLOR, or a terminal without colours) every mark
// stays readable: the cursor, the focus and the selection have a text
// marker besides their style.
package ui
