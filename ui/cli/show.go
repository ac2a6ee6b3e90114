package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// ShowOptions are `parkinglot show`'s.
type ShowOptions struct {
	*Factory
	Queue, ID string
	// Raw writes the body alone, byte for byte (binary-safe: a protobuf
	// or gzip body piped to its decoder).
	Raw bool
}

// NewCmdShow is `parkinglot show QUEUE ID`.
func NewCmdShow(f *Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "show QUEUE ID [--raw]",
		Short: "Show one message: properties, headers, decoded death history, body",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queue, opts.ID = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "write the body alone, as its bytes are (for a pipe: | gunzip, | protoc --decode_raw)")
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	s, err := opts.Session(ctx, "show")
	if err != nil {
		return err
	}
	defer s.Close()
	m, sum, err := s.Find(ctx, opts.Queue, opts.ID)
	if err != nil {
		return err
	}
	out := opts.IOStreams.Out
	if opts.Raw {
		_, err := out.Write(m.Body)
		return err
	}
	if opts.JSON() {
		line, err := MessageJSON(opts.Bodies, opts.Queue, m, sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(line))
		return err
	}
	return WriteMessage(out, opts.Bodies, opts.Queue, m, sum, time.Now())
}
