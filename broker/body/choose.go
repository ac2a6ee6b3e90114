package body

import (
	"mime"
	"strings"

	"github.com/hamba/avro/v2"
)

// choice is the format a body is read as, its type, and what chose it.
type choice struct {
	Format Format
	Type   string
	From   string
}

// choose decides how a body (b: its compression undone) is read, first
// rule that speaks: its content type (with its messageType or schema
// parameter, else the type property or header or the rule for the type);
// else the rule (config, flag); else a type property or header naming a
// protobuf message or an Avro schema loaded; else an Avro framing naming a
// schema loaded; else JSON when it is an object or an array.
func choose(in Input, b []byte) choice {
	mt, params, err := mime.ParseMediaType(in.ContentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(in.ContentType, ";", 2)[0]))
	}
	param := func(names ...string) string {
		for _, n := range names {
			if v := params[n]; v != "" {
				return v
			}
		}
		return ""
	}
	typeFrom := in.TypeFrom
	if typeFrom == "" {
		typeFrom = "type"
	}
	ruleType := func(f Format) string {
		if in.Rule.Format == f {
			return in.Rule.Type
		}
		return ""
	}
	switch {
	case strings.Contains(mt, "protobuf") || strings.HasSuffix(mt, "x-proto") || strings.HasSuffix(mt, "+proto"):
		c := choice{Format: Protobuf, From: "content_type", Type: param("messagetype", "proto", "type", "schema")}
		if c.Type == "" {
			if _, ok := in.Schemas.message(in.Type); ok {
				c.Type, c.From = in.Type, typeFrom
			} else if t := ruleType(Protobuf); t != "" {
				c.Type, c.From = t, in.Rule.From
			}
		}
		return c
	case strings.Contains(mt, "avro"):
		c := choice{Format: Avro, From: "content_type", Type: param("schema", "type", "record")}
		if _, ok := in.Schemas.avroSchema(in.Type); c.Type == "" && ok {
			c.Type, c.From = in.Type, typeFrom
		} else if t := ruleType(Avro); c.Type == "" && t != "" {
			c.Type, c.From = t, in.Rule.From
		}
		return c
	case IsMessagePack(mt):
		return choice{Format: MessagePack, From: "content_type"}
	case IsJSON(mt):
		return choice{Format: JSON, From: "content_type"}
	case in.Rule.Format != None:
		return choice(in.Rule)
	}
	if _, ok := in.Schemas.message(in.Type); ok {
		return choice{Format: Protobuf, Type: in.Type, From: typeFrom}
	}
	if _, ok := in.Schemas.avroSchema(in.Type); ok {
		return choice{Format: Avro, Type: in.Type, From: typeFrom}
	}
	if sc, _, framing := in.Schemas.avroFraming(b); sc != nil {
		return choice{Format: Avro, Type: schemaName(sc), From: framing}
	}
	if looksLikeJSONDocument(b) {
		return choice{Format: JSON}
	}
	return choice{}
}

// schemaName is an Avro schema's full name, or its type for an unnamed one.
func schemaName(sc avro.Schema) string {
	if n, ok := sc.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(sc.Type())
}
