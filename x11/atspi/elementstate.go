package atspi

import "unicode/utf8"

// StateSet returns the element's AT-SPI states as the walk read them (every state, not
// only the reported ones): verification asks about enabled, selected and checked
// directly.
func (e *Element) StateSet() StateSet { return e.state }

// Enabled reports whether the element's states say it can be used: enabled or sensitive.
func (s StateSet) Enabled() bool { return s&(StateEnabled|StateSensitive) != 0 }

// ValueComplete reports whether v, an element's value from a walk, is the whole value: a
// walk reads MaxValueChars characters and keeps at most 200 bytes of them, so a value
// that long may have been cut.
func ValueComplete(v string) bool {
	return utf8.RuneCountInString(v) < maxValueChars && len(v) <= maxNameBytes
}

// MaxValueChars is the most characters of an element's text a walk reads.
const MaxValueChars = maxValueChars
