package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// PublishOptions are `parkinglot publish`'s.
type PublishOptions struct {
	*Factory
	replay.PublishOptions
	body, file  string
	bodySet     bool
	headers     []string
	contentType string
}

// NewCmdPublish is `parkinglot publish EXCHANGE ROUTING_KEY`.
func NewCmdPublish(f *Factory, runF func(context.Context, *PublishOptions) error) *cobra.Command {
	opts := &PublishOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "publish EXCHANGE ROUTING_KEY (--body TEXT | --file PATH) [--header K=V]… [--id ID] [--count N]",
		Short: "Publish a message as a producer that loses nothing does: persistent, mandatory, confirmed",
		Long: `Publish a message to EXCHANGE with ROUTING_KEY ("" is the default
exchange, whose routing key is a queue's name): persistent, mandatory and
confirmed, so it is on disk in a queue when the command says so, and a
message no queue is bound to take is an error (exit 1), not a silent loss.
The body is --body TEXT or --file PATH (- for stdin). Its content type is
--content-type, else application/json when the body is JSON, else
text/plain. --id sets the message id (default: a new random one; with
--count N, ID-1 … ID-N).`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Exchange, opts.RoutingKey = args[0], args[1]
			opts.bodySet = cmd.Flags().Changed("body")
			if err := opts.parse(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return publishRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.body, "body", "", "the message body")
	fl.StringVar(&opts.file, "file", "", "read the body from `PATH` (- for stdin)")
	fl.StringArrayVar(&opts.headers, "header", nil, "a header `K=V` (repeatable; the value is a string)")
	fl.StringVar(&opts.contentType, "content-type", "", "content type (default: application/json for a JSON body, else text/plain)")
	fl.StringVar(&opts.MessageID, "id", "", "message id (default: a new random one)")
	fl.IntVar(&opts.Count, "count", 1, "copies to publish (ids ID-1 … ID-N)")
	return cmd
}

// parse checks the flags; the body itself is read by publishRun.
func (o *PublishOptions) parse() error {
	switch {
	case o.bodySet == (o.file != ""):
		return usagef("publish: give the body with --body TEXT or --file PATH (- for stdin), one of them")
	case o.Count < 1:
		return usagef("publish: --count %d: want 1 or more", o.Count)
	}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return usagef("publish: --header %q: want K=V", h)
		}
		if o.Headers == nil {
			o.Headers = amqp.Table{}
		}
		o.Headers[k] = v
	}
	return nil
}

// readBody is --body, or --file's content (stdin for -).
func (o *PublishOptions) readBody() ([]byte, error) {
	switch {
	case o.bodySet:
		return []byte(o.body), nil
	case o.file == "-":
		return io.ReadAll(o.IOStreams.In)
	}
	b, err := os.ReadFile(o.file)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("publish: --file: %w", err)}
	}
	return b, nil
}

func publishRun(ctx context.Context, opts *PublishOptions) error {
	f := opts.Factory
	body, err := opts.readBody()
	if err != nil {
		return err
	}
	o := opts.PublishOptions
	o.Body, o.ContentType = body, opts.contentType
	if o.ContentType == "" {
		o.ContentType = "text/plain"
		if json.Valid(body) {
			o.ContentType = "application/json"
		}
	}
	if o.MessageID == "" {
		o.MessageID = newMessageID()
	}
	s, err := f.Session(ctx, "publish")
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Publish(ctx, o)
	if err != nil {
		if res.Published > 0 {
			fmt.Fprintln(f.IOStreams.ErrOut, format.Published(res.Published, o.Exchange, o.RoutingKey, res.IDs))
		}
		return err
	}
	if f.JSON() {
		return json.NewEncoder(f.IOStreams.Out).Encode(res)
	}
	_, err = fmt.Fprintln(f.IOStreams.Out, format.Published(res.Published, o.Exchange, o.RoutingKey, res.IDs))
	return err
}

// newMessageID is a message id no other message has: "pl-" and 12 hex
// digits.
func newMessageID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "pl-" + hex.EncodeToString(b)
}
