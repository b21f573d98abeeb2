package atspi

// Interface names on the accessibility bus.
const (
	ifaceAccessible   = "org.a11y.atspi.Accessible"
	ifaceApplication  = "org.a11y.atspi.Application"
	ifaceAction       = "org.a11y.atspi.Action"
	ifaceComponent    = "org.a11y.atspi.Component"
	ifaceText         = "org.a11y.atspi.Text"
	ifaceEditableText = "org.a11y.atspi.EditableText"
	ifaceValue        = "org.a11y.atspi.Value"
	ifaceSelection    = "org.a11y.atspi.Selection"
	ifaceProperties   = "org.freedesktop.DBus.Properties"
)

// ifaceSet is the subset of interfaces an element implements that matter here.
type ifaceSet uint8

const (
	hasAction ifaceSet = 1 << iota
	hasComponent
	hasText
	hasEditableText
	hasValue
	hasSelection
)

func parseIfaces(names []string) ifaceSet {
	var s ifaceSet
	for _, n := range names {
		switch n {
		case ifaceAction:
			s |= hasAction
		case ifaceComponent:
			s |= hasComponent
		case ifaceText:
			s |= hasText
		case ifaceEditableText:
			s |= hasEditableText
		case ifaceValue:
			s |= hasValue
		case ifaceSelection:
			s |= hasSelection
		}
	}
	return s
}

// Names lists the interfaces in s by their short names ("Action", "Component", …).
func (s ifaceSet) names() []string {
	var out []string
	for _, p := range []struct {
		bit  ifaceSet
		name string
	}{{hasAction, "Action"}, {hasComponent, "Component"}, {hasText, "Text"},
		{hasEditableText, "EditableText"}, {hasValue, "Value"}, {hasSelection, "Selection"}} {
		if s&p.bit != 0 {
			out = append(out, p.name)
		}
	}
	return out
}

// layoutRoles are containers that only arrange their children: without a name, an
// action or a value they get no row of their own, but their children are still walked.
var layoutRoles = map[string]bool{
	"filler": true, "panel": true, "unknown": true, "redundant object": true, "invalid": true,
	"section": true, "scroll pane": true, "viewport": true, "layered pane": true,
	"split pane": true, "glass pane": true, "root pane": true, "box": true, "grouping": true,
	"form": true, "block quote": true, "paragraph": true, "static": true, "separator": true,
	"image": true, "icon": true, "internal frame": true, "desktop frame": true, "application": true,
}

// structureRoles are containers worth a row even without a name: an agent navigates by them.
var structureRoles = map[string]bool{
	"table": true, "tree table": true, "tree": true, "list": true, "list box": true,
	"menu bar": true, "menu": true, "tool bar": true, "page tab list": true, "combo box": true,
	"status bar": true, "dialog": true, "frame": true, "window": true, "alert": true,
	"file chooser": true, "color chooser": true, "font chooser": true, "document frame": true,
}

// PasswordRole is the role name of a password field (ATSPI_ROLE_PASSWORD_TEXT: a GTK
// entry with visibility off, a Qt password line edit, a browser's <input type=password>).
// Its text is never read.
const PasswordRole = "password text"

const passwordRole = PasswordRole

// textValueRoles are roles whose Text content is their value (shown as value="…").
var textValueRoles = map[string]bool{
	"text": true, "entry": true, "editbar": true, "spin button": true, "combo box": true,
	"terminal": true, "document text": true,
}

// activateRoles are roles whose "activate" action is what a double-click does (open a
// row, a file, an icon).
var activateRoles = map[string]bool{
	"table cell": true, "list item": true, "tree item": true, "icon": true, "table row": true,
	"tree table cell": true, "layered pane": true,
}
