package ui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/ui/format"
)

// Limits that keep a huge body from freezing the screen; export shows all.
const (
	maxBodyShown = 1 << 20 // bytes pretty-printed or shown as text
	maxHexShown  = 64 << 10
	maxBodyLines = 20000
)

// bodyKind is how a body is shown.
type bodyKind string

const (
	bodyJSON   bodyKind = "JSON"
	bodyText   bodyKind = "text"
	bodyBinary bodyKind = "binary"
	bodyEmpty  bodyKind = "empty"
)

// renderBody pretty-prints a body: JSON indented and coloured, text as
// is, anything else as a hex dump. It returns the lines and what it did.
func renderBody(st *Styles, body []byte, contentType string) ([]string, bodyKind, string) {
	if len(body) == 0 {
		return []string{st.Dim.Render("(empty body)")}, bodyEmpty, ""
	}
	kind, shown := format.ClassifyBody(body, contentType, maxBodyShown)
	note := ""
	if len(body) > maxBodyShown {
		note = fmt.Sprintf("showing the first %d of %d bytes; export (x) to see it all", maxBodyShown, len(body))
	}
	switch kind {
	case format.BodyJSON:
		var buf bytes.Buffer
		_ = json.Indent(&buf, shown, "", "  ") // ClassifyBody checked it is valid
		return limitLines(colourJSON(st, buf.String())), bodyJSON, note
	case format.BodyText:
		if format.IsJSONContentType(contentType) {
			note = strings.TrimPrefix(note+"; not valid JSON, shown as text", "; ")
		}
		lines := strings.Split(strings.TrimRight(string(shown), "\n"), "\n")
		for i, l := range lines {
			lines[i] = clean(strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", "    "))
		}
		return limitLines(lines), bodyText, note
	}
	hx := shown
	if len(hx) > maxHexShown {
		hx = hx[:maxHexShown]
		note = fmt.Sprintf("showing the first %d of %d bytes as hex; export (x) to see it all", maxHexShown, len(body))
	}
	return strings.Split(strings.TrimRight(hex.Dump(hx), "\n"), "\n"), bodyBinary, note
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
