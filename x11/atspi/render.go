package atspi

import (
	"strconv"
	"strings"
)

// Markdown renders elements as compact markdown rows, one per element, indented two
// spaces per depth, such as `- [3] push button "OK" [default] actions=[click]` or
// `- [2] text value="hello" [focused] actions=[activate]`. Names and values are quoted
// Go-style, so an element's text can never forge a row.
func Markdown(els []Element) string {
	var sb strings.Builder
	sb.Grow(len(els) * 48)
	for i := range els {
		writeRow(&sb, &els[i])
	}
	return sb.String()
}

func writeRow(sb *strings.Builder, e *Element) {
	for range e.Depth {
		sb.WriteString("  ")
	}
	sb.WriteString("- [")
	sb.WriteString(strconv.Itoa(e.Index))
	sb.WriteString("] ")
	sb.WriteString(e.Role)
	if e.Name != "" {
		sb.WriteByte(' ')
		sb.WriteString(strconv.Quote(e.Name))
	}
	if e.Value != nil && (*e.Value != "" || e.Editable) {
		sb.WriteString(" value=")
		sb.WriteString(strconv.Quote(*e.Value))
	}
	if e.Range != nil {
		sb.WriteString(" range=")
		sb.WriteString(strconv.FormatFloat(e.Range.Min, 'g', -1, 64))
		sb.WriteString("..")
		sb.WriteString(strconv.FormatFloat(e.Range.Max, 'g', -1, 64))
	}
	if len(e.States) > 0 {
		sb.WriteString(" [")
		sb.WriteString(strings.Join(e.States, ","))
		sb.WriteByte(']')
	}
	if len(e.Actions) > 0 {
		sb.WriteString(" actions=[")
		sb.WriteString(strings.Join(e.Actions, ","))
		sb.WriteByte(']')
	}
	sb.WriteByte('\n')
}
