// Package store is how a parking lot of any size fits: private files for
// what a message carries, and in memory only a few fixed-size numbers a
// message. A downstream outage can park every message a service receives,
// so nothing parkinglot holds may grow with what a message carries.
//
// # What is on disk
//
// [Records] is a private temporary file of numbered records, appended by
// one goroutine and read back by any. Appends are gathered 256 KiB at a
// time and a scan reads 1 MiB at a time, so a pass over a million records
// is a few sequential reads, not a million. These live in Records:
//   - the browse spool (broker.Spool): every message a browse found,
//     bodies and headers in a compact binary form, read back when one is
//     shown;
//   - the TUI's message list ([Rows]): a search file (each id and the text
//     a filter looks in, scanned on a keystroke) and a summary file (read
//     back for the rows on screen);
//   - a replay's confirmed copies, read back only after a lost connection.
//
// An [IDSet] moves its ids to such a file once they pass 1 MiB.
//
// # What is in memory
//
//   - Records: one offset (8 bytes) a record.
//   - Rows: a 16-byte [Entry] a message (when it was parked, its error
//     group and origin as numbers into tables of the distinct ones) and a
//     bit for those that came back, plus an offset in each of its two
//     files: about 40 bytes a message (the test's budget is 100). Sorting,
//     grouping and filtering by group use the entries alone.
//   - IDSet, a selection by id (the TUI's chosen rows, a replay's ids): a
//     16-byte entry an id (a hash and where the id is kept); a hash only
//     finds candidates, the id read back decides. Measured: 18.5 bytes a
//     chosen message for 200,000.
//   - BitSet, the TUI's selection of rows or the ids a replay found: a bit
//     each, 125 KB for a million.
//   - Interner: the strings and values that repeat across a browse's
//     messages (exchange, routing key, death entries, origin) shared, at
//     most 4,096 of each, so 100k summaries of one parking lot no longer
//     hold 100k copies of them (about 30 MB).
//
// [ApplyMemoryLimit] sets the soft memory limit the TUI (and the browse
// benchmark's child, measured as the TUI runs) works within.
//
// Nothing here grows with a message's body, headers or error text. Bounds
// elsewhere keep the rest flat: list, export and a replay's plan stream, a
// run lists its first failures and counts the rest.
//
// # Why files are unlinked at open
//
// The files are created 0600 (they hold message bodies and headers), and
// their names are removed as soon as they are open: the open file lives on
// until it is closed, so a program that is killed (a terminal closed, a
// SIGKILL) leaves no copy of the messages in the temporary directory, and
// the space is freed when the file is closed (a list reloaded, the TUI
// ended) or the process ends. Where the system cannot remove an open
// file's name, Close removes it.
//
// This package imports no other parkinglot package, so broker, replay and
// the TUI can all use it. It lives under broker because broker, the lowest
// layer, is the first to need it (the browse spool).
package store
