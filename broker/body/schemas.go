package body

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Sources name the schemas bodies are decoded with.
type Sources struct {
	// ProtoPaths are where the imports of .proto files are found.
	ProtoPaths []string
	// Protos are .proto files, compiled when loaded, or descriptor sets
	// (protoc -o, buf build: any other file name).
	Protos []string
	// AvroSchemas are .avsc files; a schema may name the types of one
	// loaded before it.
	AvroSchemas []string
	// ConfluentIDs map the schema id of the Confluent wire format (a zero
	// byte, the id, the datum) to an Avro schema: one of AvroSchemas by
	// file name or full name.
	ConfluentIDs map[uint32]string
}

// Empty reports whether s names no schema.
func (s Sources) Empty() bool {
	return len(s.Protos) == 0 && len(s.AvroSchemas) == 0 && len(s.ConfluentIDs) == 0
}

// ErrSchema is a schema that cannot be loaded; the error names the file.
var ErrSchema = errors.New("schema")

// Schemas are loaded protobuf descriptors and Avro schemas.
type Schemas struct {
	files     *protoregistry.Files
	types     *dynamicpb.Types
	avro      map[string]avro.Schema // by full name and by file name
	avroFP    map[uint64]avro.Schema // single-object encoding: CRC-64-AVRO fingerprint
	confluent map[uint32]avro.Schema
}

// LoadSchemas loads what src names. A nil result with no error: it names
// nothing.
func LoadSchemas(ctx context.Context, src Sources) (*Schemas, error) {
	if src.Empty() {
		return nil, nil
	}
	s := &Schemas{files: &protoregistry.Files{}, avro: map[string]avro.Schema{}, avroFP: map[uint64]avro.Schema{}, confluent: map[uint32]avro.Schema{}}
	var sources []string
	for _, p := range src.Protos {
		if strings.HasSuffix(p, ".proto") {
			sources = append(sources, p)
			continue
		}
		if err := s.loadDescriptorSet(p); err != nil {
			return nil, err
		}
	}
	if len(sources) > 0 {
		if err := s.compile(ctx, src.ProtoPaths, sources); err != nil {
			return nil, err
		}
	}
	s.types = dynamicpb.NewTypes(s.files)
	cache := &avro.SchemaCache{}
	for _, p := range src.AvroSchemas {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrSchema, p, err)
		}
		sc, err := avro.ParseBytesWithCache(b, "", cache)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrSchema, p, err)
		}
		s.avro[p], s.avro[filepath.Base(p)] = sc, sc
		if n, ok := sc.(avro.NamedSchema); ok {
			s.avro[n.FullName()] = sc
		}
		if fp, err := sc.FingerprintUsing(avro.CRC64Avro); err == nil && len(fp) == 8 {
			s.avroFP[binary.BigEndian.Uint64(fp)] = sc
		}
	}
	for id, name := range src.ConfluentIDs {
		sc, ok := s.avro[name]
		if !ok {
			return nil, fmt.Errorf("%w: Confluent schema id %d names %s, which is no Avro schema loaded", ErrSchema, id, name)
		}
		s.confluent[id] = sc
	}
	return s, nil
}

func (s *Schemas) loadDescriptorSet(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrSchema, p, err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return fmt.Errorf("%w %s: not a descriptor set (protoc -o, buf build): %w", ErrSchema, p, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrSchema, p, err)
	}
	var rerr error
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		rerr = s.register(fd)
		return rerr == nil
	})
	if rerr != nil {
		return fmt.Errorf("%w %s: %w", ErrSchema, p, rerr)
	}
	return nil
}

// compile compiles .proto files, their imports found in paths (and the
// well-known types built in).
func (s *Schemas) compile(ctx context.Context, paths, files []string) error {
	rel := make([]string, len(files))
	for i, f := range files {
		rel[i] = f
		for _, p := range paths { // the compiler names a file by its import path
			if r, err := filepath.Rel(p, f); err == nil && !strings.HasPrefix(r, "..") {
				rel[i] = filepath.ToSlash(r)
				break
			}
		}
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths})}
	res, err := c.Compile(ctx, rel...)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSchema, err)
	}
	for _, fd := range res {
		if err := s.registerWithImports(fd); err != nil {
			return fmt.Errorf("%w %s: %w", ErrSchema, fd.Path(), err)
		}
	}
	return nil
}

func (s *Schemas) registerWithImports(fd protoreflect.FileDescriptor) error {
	imports := fd.Imports()
	for i := range imports.Len() {
		if err := s.registerWithImports(imports.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return s.register(fd)
}

// register adds fd once (a file imported twice is the same file).
func (s *Schemas) register(fd protoreflect.FileDescriptor) error {
	if _, err := s.files.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	return s.files.RegisterFile(fd)
}

// message is the protobuf message descriptor of a full name.
func (s *Schemas) message(name string) (protoreflect.MessageDescriptor, bool) {
	if s == nil || s.files == nil {
		return nil, false
	}
	d, err := s.files.FindDescriptorByName(protoreflect.FullName(strings.TrimPrefix(name, ".")))
	if err != nil {
		return nil, false
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	return md, ok
}

// avroSchema is an Avro schema by full name or file name.
func (s *Schemas) avroSchema(name string) (avro.Schema, bool) {
	if s == nil {
		return nil, false
	}
	sc, ok := s.avro[name]
	return sc, ok
}
