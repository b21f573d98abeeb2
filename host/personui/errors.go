package personui

import "errors"

var (
	// ErrNoAnswer is returned with Deny when the context ended before the person answered.
	ErrNoAnswer = errors.New("personui: no answer")
	// ErrDisplay is returned when the display cannot be reached or the window cannot be
	// created or shown.
	ErrDisplay = errors.New("personui: display")
	// ErrClosed is returned by an Indicator used after Close.
	ErrClosed = errors.New("personui: closed")
	// ErrCovered is returned with Deny when another window stayed over the dialog for
	// longer than CoverBudget although the dialog restacked itself above it.
	ErrCovered = errors.New("personui: covered by another window")
)
