// Package store is how a parking lot of any size fits: private files for
// what a message carries, and in memory only a few fixed-size numbers a
// message. A downstream outage can park every message a service receives,
// so nothing parkinglot holds may grow with what a message carries.
//
// # What is on disk
//
// [Records] is a private temporary file of numbered records, appended by
// one goroutine and read back by any. The browse spool (broker.Spool:
// every message a browse found, bodies and headers in a compact binary
// form) and the replay's confirmed copies (kept for a lost connection)
// live in Records; appends are gathered 256 KiB at a time, and a scan
// reads 1 MiB at a time, so a pass over a million records is a few
// sequential reads, not a million. An [IDSet] moves its ids to such a file
// once they pass 1 MiB.
//
// # What is in memory
//
//   - Records: one offset (8 bytes) a record.
//   - IDSet, a selection by id (the TUI's chosen rows, a replay's --id
//     list): a 16-byte entry an id (a hash and where the id is kept); a hash
//     only finds candidates, the id read back decides. Measured: 18.5 bytes
//     a chosen message for 200,000.
//   - BitSet, a selection of rows or the ids found: a bit each, 125 KB for
//     a million.
//   - Interner: the strings and values that repeat across a browse's
//     messages (exchange, routing key, death entries, origin) shared, at
//     most 4,096 of each, so 100k summaries of one parking lot no longer
//     hold 100k copies of them (about 30 MB).
//
// # Why files are unlinked at open
//
// The files are created 0600 (they hold message bodies and headers) and
// their names are removed as soon as they are open: the open file lives on
// until it is closed, so a program that is killed (a terminal closed, a
// SIGKILL) leaves no copy of the messages in the temporary directory, and
// the space is freed when the file is closed or the process ends. Where the
// system cannot remove an open file's name, Close removes it.
//
// This package imports no other parkinglot package, so broker, replay and
// the TUI can all use it.
package store
