package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Config is $XDG_CONFIG_HOME/parkinglot/config.yaml: named connection
// contexts and per-parking-lot replay defaults.
type Config struct {
	CurrentContext string                `yaml:"current_context"`
	Contexts       map[string]Context    `yaml:"contexts"`
	ParkingLots    map[string]ParkingLot `yaml:"parking_lots"`
	Decode         Decode                `yaml:"decode"`
}

// Context is one named broker (or cluster) to talk to.
type Context struct {
	URL           URLList `yaml:"url"`
	ManagementURL URLList `yaml:"management_url"`
	Vhost         string  `yaml:"vhost"`
	TLS           struct {
		CA   string `yaml:"ca"`
		Cert string `yaml:"cert"`
		Key  string `yaml:"key"`
	} `yaml:"tls"`
	// PasswordFile and PasswordCommand give the password of a URL that
	// names a user but no password, to keep it out of plain text: the file's first
	// line, or the first line the command prints. The command line resolves
	// them; the engine only ever sees the finished URL.
	PasswordFile    string `yaml:"password_file"`
	PasswordCommand Argv   `yaml:"password_command"`
}

// Argv is a command and its arguments: a YAML list, or a string split at
// spaces (no shell, no quoting).
type Argv []string

// UnmarshalYAML reads a string or a list of strings.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*a = strings.Fields(n.Value)
		return nil
	case yaml.SequenceNode:
		args := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a command is a list of words (strings)", c.Line)
			}
			args = append(args, c.Value)
		}
		*a = args
		return nil
	}
	return fmt.Errorf("line %d: want a command: a string or a list of words", n.Line)
}

// URLList is a context's url or management_url: one URL, a comma list, or
// a YAML list of a cluster's nodes; it holds them as one comma list, the
// form broker.Options.URL and broker.NewManagement take.
type URLList string

// UnmarshalYAML reads a string or a list of strings.
func (l *URLList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = URLList(n.Value)
		return nil
	case yaml.SequenceNode:
		urls := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.TrimSpace(c.Value) == "" {
				return fmt.Errorf("line %d: a URL list holds URLs (strings)", c.Line)
			}
			urls = append(urls, strings.TrimSpace(c.Value))
		}
		*l = URLList(strings.Join(urls, ","))
		return nil
	}
	return fmt.Errorf("line %d: want a URL or a list of URLs", n.Line)
}

// ParkingLot holds the replay defaults for one parking-lot queue.
type ParkingLot struct {
	// To is the default destination, "EXCHANGE:ROUTING_KEY".
	To string `yaml:"to"`
	// Rate is the default replay rate in messages per second (0: unlimited).
	Rate float64 `yaml:"rate"`
}

// DefaultConfigPath is $XDG_CONFIG_HOME/parkinglot/config.yaml (or
// ~/.config/parkinglot/config.yaml).
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "parkinglot", "config.yaml")
}

// LoadConfig reads a config file that may be absent (the default path): a
// missing file is an empty config. An unknown key is an error.
func LoadConfig(path string) (Config, error) {
	c, err := ReadConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	return c, err
}

// ReadConfig reads a config file that must exist (one named explicitly): a
// missing file is an error wrapping fs.ErrNotExist. An empty path is an
// empty config. An unknown key is an error.
func ReadConfig(path string) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("config file %s does not exist: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("config %s: %s", path, retrycore.YAMLProblem(err, configYAMLProblems))
	}
	if err := c.Decode.check(); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	c.Decode.relativeTo(filepath.Dir(path))
	for name, pl := range c.ParkingLots {
		if !RateOK(pl.Rate) {
			return c, fmt.Errorf("config %s: parking_lots.%s.rate: %v: want %v messages per second or more (0: as fast as confirms come)", path, name, pl.Rate, MinRate)
		}
		if pl.To != "" {
			if _, err := retrycore.ParseDestination(pl.To); err != nil {
				return c, fmt.Errorf("config %s: parking_lots.%s.to: %w", path, name, err)
			}
		}
	}
	return c, nil
}

// configYAMLProblems reword yaml.v3's messages in the file's terms rather
// than Go's ("field colour not found in type replay.Context").
var configYAMLProblems = []retrycore.YAMLRule{
	retrycore.Reword(`field (\S+) not found in type replay\.Config`, `unknown key "$1" (known: current_context, contexts, parking_lots, decode)`),
	retrycore.Reword(`field (\S+) not found in type replay\.Context`, `unknown key "$1" in a context (known: url, management_url, vhost, tls, password_file, password_command)`),
	retrycore.Reword(`field (\S+) not found in type struct.*`, `unknown key "$1" in tls (known: ca, cert, key)`),
	retrycore.Reword(`field (\S+) not found in type replay\.Decode\b`, `unknown key "$1" in decode (known: proto_path, proto, avro_schema, confluent_ids, type_header, queues)`),
	retrycore.Reword(`field (\S+) not found in type replay\.DecodeQueue`, `unknown key "$1" in a decode queue (known: queue, format, type)`),
	retrycore.Reword(`field (\S+) not found in type replay\.ParkingLot`, `unknown key "$1" in a parking lot (known: to, rate)`),
	retrycore.Reword("cannot unmarshal !!\\w+ `([^`]*)` into float64", `"$1" is not a number`),
	retrycore.Reword("cannot unmarshal !!\\w+ `([^`]*)` into string", `"$1" is not text`),
	retrycore.Reword("cannot unmarshal !!(\\w+)(?: `[^`]*`)? into replay\\.Config", `a $1 where the keys current_context, contexts and parking_lots belong`),
	retrycore.Reword("cannot unmarshal !!(\\w+)(?: `[^`]*`)? into (map\\[string\\]replay\\.\\w+|replay\\.\\w+|struct.*)", `a $1 where a section {…} belongs`),
	retrycore.Reword("cannot unmarshal !!(\\w+)(?: `[^`]*`)? into \\S+", `a $1 where a single value belongs`),
}

// DefaultDestination returns the configured default destination of a
// parking lot, or nil.
func (c Config) DefaultDestination(queue string) *retrycore.Destination {
	pl, ok := c.ParkingLots[queue]
	if !ok || pl.To == "" {
		return nil
	}
	d, err := retrycore.ParseDestination(pl.To)
	if err != nil {
		return nil
	}
	return &d
}

// IsParkingLot reports whether the config declares queue as a parking lot.
func (c Config) IsParkingLot(queue string) bool {
	_, ok := c.ParkingLots[queue]
	return ok
}

// Connection is the resolved way to reach the broker.
type Connection struct {
	URL           string
	ManagementURL string // empty: derive from URL
	Vhost         string
	TLS           broker.TLSFiles
	Context       string // the context used, if any
	// ManagementAssumed: no management URL was given; ManagementURL is
	// derived from URL (broker.AssumedManagementURLs pairs them).
	ManagementAssumed bool
	// AllowManagementMismatch uses the management API without checking
	// that it belongs to the AMQP connection's cluster
	// (broker.CheckManagement).
	AllowManagementMismatch bool
}

// Options returns the broker dial options for this connection.
func (c Connection) Options(name string) broker.Options {
	return broker.Options{URL: c.URL, TLS: c.TLS, Name: name}
}

// Management returns a management API client, or an error wrapping
// broker.ErrNoManagement.
func (c Connection) Management() (*broker.Management, error) {
	if c.ManagementURL == "" {
		return nil, fmt.Errorf("%w: no management URL configured", broker.ErrNoManagement)
	}
	return broker.NewManagement(c.ManagementURL, c.Vhost)
}
