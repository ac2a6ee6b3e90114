// Package clitest runs the parkinglot binary against the broker under
// test, for the end-to-end tests where a terminal or a real process is the
// point (pseudo-terminal prompts, the TUI in tmux, the daemon). It builds
// the whole app, which is why it sits on the CLI's side: engine tests use
// the engine API and never need it.
package clitest
