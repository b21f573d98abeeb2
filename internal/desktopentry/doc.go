// Package desktopentry reads freedesktop.org desktop entries (the Desktop Entry
// Specification, version 1.5): the .desktop files through which a system declares the
// applications it offers. It parses strictly and within fixed bounds, finds entries in the
// XDG data directories by desktop id, and expands an entry's Exec line into an argument
// vector with its field codes replaced.
//
// It is for deciding which program a launch runs. It is not a menu implementation: it
// ignores translations, icons, actions, MIME associations, OnlyShowIn/NotShowIn and D-Bus
// activation, and it never runs anything.
package desktopentry
