package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/parkinglot/parkinglot/broker/body"
)

// Decode is the config's decode section: the schemas bodies are read with
// and, per queue, how (README, Message bodies). Paths are relative to the
// config file.
type Decode struct {
	ProtoPath    []string          `yaml:"proto_path"`
	Proto        []string          `yaml:"proto"`
	AvroSchema   []string          `yaml:"avro_schema"`
	ConfluentIDs map[uint32]string `yaml:"confluent_ids"`
	// TypeHeader names the header in which producers say which protobuf
	// message or Avro schema a body is, over the type property.
	TypeHeader string        `yaml:"type_header"`
	Queues     []DecodeQueue `yaml:"queues"`
}

// DecodeQueue is how the bodies of the queues Queue names (a name or a
// glob) are read: Format protobuf, avro, msgpack or json; Type the
// protobuf message or the Avro schema.
type DecodeQueue struct {
	Queue  string `yaml:"queue"`
	Format string `yaml:"format"`
	Type   string `yaml:"type"`
}

// DecodeFlags are the command line's additions to the config's decode:
// more schemas, and the rule for bodies nothing else says how to read.
type DecodeFlags struct {
	ProtoPath   []string
	Proto       []string
	AvroSchema  []string
	MessageType string // a protobuf message's full name
}

// decodeFormats are the formats a decode rule may name.
var decodeFormats = []body.Format{body.Protobuf, body.Avro, body.MessagePack, body.JSON}

// check says what is wrong with the section, naming the key.
func (d Decode) check() error {
	for i, q := range d.Queues {
		if q.Queue == "" {
			return fmt.Errorf("decode.queues[%d]: no queue (a name or a glob)", i)
		}
		if _, err := filepath.Match(q.Queue, ""); err != nil {
			return fmt.Errorf("decode.queues[%d].queue %q: %w", i, q.Queue, err)
		}
		if !slices.Contains(decodeFormats, body.Format(q.Format)) {
			return fmt.Errorf("decode.queues[%d].format %q: want protobuf, avro, msgpack or json", i, q.Format)
		}
		if (q.Format == string(body.Protobuf) || q.Format == string(body.Avro)) && q.Type == "" {
			return fmt.Errorf("decode.queues[%d]: format %s needs a type (the message or schema name)", i, q.Format)
		}
	}
	return nil
}

// relativeTo makes the section's paths relative to dir (the config
// file's folder) where they are not absolute. confluent_ids name schemas
// (a file's base name or a full name), not paths.
func (d *Decode) relativeTo(dir string) {
	for _, l := range []*[]string{&d.ProtoPath, &d.Proto, &d.AvroSchema} {
		for i, p := range *l {
			if !filepath.IsAbs(p) {
				(*l)[i] = filepath.Join(dir, p)
			}
		}
	}
}

// BodyReader loads the schemas the config's decode and the flags name
// and returns the reader of bodies they make; nil when they name nothing.
// A schema that cannot be loaded is an error wrapping body.ErrSchema.
func BodyReader(ctx context.Context, d Decode, f DecodeFlags) (*body.Reader, error) {
	src := body.Sources{
		ProtoPaths:   append(slices.Clone(d.ProtoPath), f.ProtoPath...),
		Protos:       append(slices.Clone(d.Proto), f.Proto...),
		AvroSchemas:  append(slices.Clone(d.AvroSchema), f.AvroSchema...),
		ConfluentIDs: d.ConfluentIDs,
	}
	if src.Empty() && len(d.Queues) == 0 && f.MessageType == "" && d.TypeHeader == "" {
		return nil, nil
	}
	s, err := body.LoadSchemas(ctx, src)
	if err != nil {
		return nil, err
	}
	r := &body.Reader{Schemas: s, TypeHeader: d.TypeHeader}
	for _, q := range d.Queues {
		r.Queues = append(r.Queues, body.QueueRule{Pattern: q.Queue,
			Rule: body.Rule{Format: body.Format(q.Format), Type: q.Type, From: "config decode for " + q.Queue}})
	}
	if f.MessageType != "" {
		r.Default = body.Rule{Format: body.Protobuf, Type: f.MessageType, From: "--message-type"}
	}
	return r, nil
}
