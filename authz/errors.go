package authz

import (
	"errors"
	"strconv"
)

// ErrInvalidManifest is matched (errors.Is) by every error that rejects a manifest's
// content.
var ErrInvalidManifest = errors.New("authz: invalid manifest")

// ManifestError is a manifest that cannot be loaded: where, which field, and why.
type ManifestError struct {
	// File is the manifest's path, when it was loaded from one.
	File string
	// Line is the 1-based line of the offending node, 0 when unknown.
	Line int
	// Field is the offending field's path, e.g. "allow.tools[2]" or
	// "resources.apps[0].executable"; "" for the document as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error reads "manifest FILE: line 4: allow.tools[2]: unknown tool "clik"".
func (e *ManifestError) Error() string {
	s := "manifest"
	if e.File != "" {
		s += " " + e.File
	}
	if e.Line > 0 {
		s += ": line " + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Unwrap returns ErrInvalidManifest.
func (e *ManifestError) Unwrap() error { return ErrInvalidManifest }
