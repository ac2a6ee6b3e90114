package ui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/ui/format"
)

// Limits that keep a huge body from freezing the screen; export shows all.
const (
	maxBodyShown = 1 << 20 // bytes pretty-printed or shown as text
	maxHexShown  = 64 << 10
	maxBodyLines = 20000
)

// renderBody pretty-prints a body as format.ReadBody reads it: JSON and
// MessagePack indented and coloured, text as is, anything else as a hex
// dump. It returns the lines, the kind shown and a note (what was undone
// to show it, why it is shown as it is, or that it was cut).
func renderBody(st *Styles, d body.Decoded, contentType string) ([]string, format.BodyKind, string) {
	if len(d.Bytes) == 0 && d.Err == nil {
		return []string{st.Dim.Render("(empty body)")}, format.BodyEmpty, ""
	}
	r := format.ReadBody(d, contentType, maxBodyShown)
	notes := r.Notes
	if r.Cut {
		notes = append(notes, fmt.Sprintf("showing the first %d of %d bytes; export (x) to see it all", maxBodyShown, r.Size))
	}
	switch r.Kind {
	case format.BodyJSON, format.BodyMessagePack, format.BodyProtobuf, format.BodyAvro:
		var buf bytes.Buffer
		_ = json.Indent(&buf, r.Shown, "", "  ") // ReadBody gives valid JSON for these
		return limitLines(colourJSON(st, buf.String())), r.Kind, strings.Join(notes, "; ")
	case format.BodyText:
		lines := strings.Split(strings.TrimRight(string(r.Shown), "\n"), "\n")
		for i, l := range lines {
			lines[i] = clean(strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", "    "))
		}
		return limitLines(lines), r.Kind, strings.Join(notes, "; ")
	}
	hx := r.Shown
	if len(hx) > maxHexShown {
		hx = hx[:maxHexShown]
		notes = append(r.Notes, fmt.Sprintf("showing the first %d of %d bytes as hex; export (x) to see it all", maxHexShown, r.Size))
	}
	return strings.Split(strings.TrimRight(hex.Dump(hx), "\n"), "\n"), r.Kind, strings.Join(notes, "; ")
}

// rawHex is a body's bytes as a hex dump, at most maxHexShown of them.
func rawHex(b []byte) []string {
	return strings.Split(strings.TrimRight(hex.Dump(b[:min(len(b), maxHexShown)]), "\n"), "\n")
}

func limitLines(lines []string) []string {
	if len(lines) <= maxBodyLines {
		return lines
	}
	return append(lines[:maxBodyLines:maxBodyLines], fmt.Sprintf("… %d more lines", len(lines)-maxBodyLines))
}

// colourJSON colours indented, valid JSON line by line: keys, strings,
// numbers, literals and punctuation.
func colourJSON(st *Styles, s string) []string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		var b strings.Builder
		for j := 0; j < len(line); {
			c := line[j]
			switch {
			case c == '"':
				end := j + 1
				for end < len(line) && line[end] != '"' {
					if line[end] == '\\' {
						end++
					}
					end++
				}
				end = min(end+1, len(line))
				tok := clean(line[j:end]) // C1 controls may be raw in JSON strings
				if strings.HasPrefix(strings.TrimLeft(line[end:], " "), ":") {
					b.WriteString(st.JSONKey.Render(tok))
				} else {
					b.WriteString(st.JSONString.Render(tok))
				}
				j = end
			case c == '-' || (c >= '0' && c <= '9'):
				end := j
				for end < len(line) && strings.IndexByte("+-0123456789.eE", line[end]) >= 0 {
					end++
				}
				b.WriteString(st.JSONNumber.Render(line[j:end]))
				j = end
			case c == 't' || c == 'f' || c == 'n':
				end := j
				for end < len(line) && line[end] >= 'a' && line[end] <= 'z' {
					end++
				}
				b.WriteString(st.JSONLiteral.Render(line[j:end]))
				j = end
			case strings.IndexByte("{}[],:", c) >= 0:
				b.WriteString(st.JSONPunct.Render(string(c)))
				j++
			default:
				b.WriteByte(c)
				j++
			}
		}
		lines[i] = b.String()
	}
	return lines
}
