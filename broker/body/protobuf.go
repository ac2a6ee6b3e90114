package body

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// decodeProtobuf decodes b as the message md into plain values
// (plainProto) and counts the bytes of fields md does not name (a newer
// producer than the schema).
func decodeProtobuf(s *Schemas, md protoreflect.MessageDescriptor, b []byte) (any, int, error) {
	m := dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{Resolver: s.types}).Unmarshal(b, m); err != nil {
		return nil, 0, err
	}
	unknown := 0
	v := plainProto(s, m, &unknown)
	return v, unknown, nil
}

// plainProto is a message as a filter compares it and JSON writes it:
// fields by their names (set ones only), enums by their names, 64-bit
// integers as int, bytes as []byte, a Timestamp a time.Time, a Duration
// as protobuf's JSON writes it ("90s"), an Any the message it holds with its "@type".
func plainProto(s *Schemas, m protoreflect.Message, unknown *int) any {
	*unknown += len(m.GetUnknown())
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		sec, nanos := m.Get(md.Fields().ByName("seconds")).Int(), m.Get(md.Fields().ByName("nanos")).Int()
		return time.Unix(sec, nanos).UTC()
	case "google.protobuf.Duration":
		sec, nanos := m.Get(md.Fields().ByName("seconds")).Int(), m.Get(md.Fields().ByName("nanos")).Int()
		return protoDuration(sec, nanos)
	case "google.protobuf.Any":
		url := m.Get(md.Fields().ByName("type_url")).String()
		value := m.Get(md.Fields().ByName("value")).Bytes()
		if mt, err := s.types.FindMessageByURL(url); err == nil {
			inner := mt.New()
			if err := proto.Unmarshal(value, inner.Interface()); err == nil {
				out, _ := plainProto(s, inner, unknown).(map[string]any)
				if out == nil {
					out = map[string]any{"value": plainProto(s, inner, unknown)}
				}
				out["@type"] = url
				return out
			}
		}
		return map[string]any{"@type": url, "value": value}
	case "google.protobuf.StringValue", "google.protobuf.Int64Value", "google.protobuf.Int32Value", "google.protobuf.BoolValue",
		"google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.UInt64Value", "google.protobuf.UInt32Value", "google.protobuf.BytesValue":
		f := md.Fields().ByName("value")
		return plainScalar(f, m.Get(f))
	}
	out := map[string]any{}
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case f.IsList():
			l := v.List()
			items := make([]any, l.Len())
			for i := range l.Len() {
				items[i] = plainField(s, f, l.Get(i), unknown)
			}
			out[string(f.Name())] = items
		case f.IsMap():
			mm := map[string]any{}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				mm[k.String()] = plainField(s, f.MapValue(), mv, unknown)
				return true
			})
			out[string(f.Name())] = mm
		default:
			out[string(f.Name())] = plainField(s, f, v, unknown)
		}
		return true
	})
	return out
}

func plainField(s *Schemas, f protoreflect.FieldDescriptor, v protoreflect.Value, unknown *int) any {
	if f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind {
		return plainProto(s, v.Message(), unknown)
	}
	return plainScalar(f, v)
}

func plainScalar(f protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch f.Kind() {
	case protoreflect.EnumKind:
		if ev := f.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return int(v.Enum())
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return v.Bytes()
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if u := v.Uint(); u <= uint64(int(^uint(0)>>1)) {
			return int(u)
		}
		return v.Uint()
	default:
		return int(v.Int())
	}
}

// protoDuration writes a Duration as protobuf's JSON mapping does: seconds
// with 0, 3, 6 or 9 fractional digits and an "s" ("90s", "-1.500s").
func protoDuration(sec, nanos int64) string {
	sign := ""
	if sec < 0 || nanos < 0 {
		sign, sec, nanos = "-", -sec, -nanos
	}
	frac := ""
	switch {
	case nanos == 0:
	case nanos%1e6 == 0:
		frac = fmt.Sprintf(".%03d", nanos/1e6)
	case nanos%1e3 == 0:
		frac = fmt.Sprintf(".%06d", nanos/1e3)
	default:
		frac = fmt.Sprintf(".%09d", nanos)
	}
	return fmt.Sprintf("%s%d%ss", sign, sec, frac)
}
