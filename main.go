// Command parkinglot browses and replays RabbitMQ parking lots, and runs the
// three-tier retry consumer. This is only the entry point: the command line
// is package ui/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/parkinglot/parkinglot/ui/cli"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// version is set by the Makefile (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	// A closed pipe (`export Q | head`) is a write error, not a signal that
	// kills the process while it holds messages: the command gives them
	// back as after any error (a dropped connection counts against a quorum
	// queue's delivery limit).
	signal.Ignore(syscall.SIGPIPE)
	// A hang-up (an SSH connection dropping) and SIGQUIT end a command as
	// Ctrl-C and SIGTERM do: everything it holds given back, its summary,
	// its exit status. Left to their defaults they kill the process, and
	// a lost connection counts against a quorum queue's delivery limit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	cli.Version = version
	code := cli.Main(ctx, os.Args[1:], iostreams.System())
	stop()
	os.Exit(code)
}
