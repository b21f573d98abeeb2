package atspi

import (
	"fmt"
	"sync"
	"time"
)

// Rect is a rectangle in pixels.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Center returns the rectangle's centre point.
func (r Rect) Center() (x, y int) { return r.X + r.Width/2, r.Y + r.Height/2 }

// Contains reports whether the point (x, y) lies inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.Width && y < r.Y+r.Height
}

// Window is an X window as the X server describes it; the walk looks for its accessible.
type Window struct {
	// ID is the X window id.
	ID uint32
	// PID is the process that owns it (server-observed when possible).
	PID int
	// Title is its _NET_WM_NAME or WM_NAME.
	Title string
	// Frame is its client area in root coordinates.
	Frame Rect
}

// ValueRange is a Value element's bounds.
type ValueRange struct {
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Step float64 `json:"step,omitempty"`
}

// Element is one element of a snapshot: an accessible object worth showing an agent.
type Element struct {
	// Index is the element's 0-based position in its snapshot (pre-order).
	Index int `json:"element_index"`
	// Token is "snapshot:index", accepted by the element-targeted tools.
	Token string `json:"element_token"`
	// Role is the AT-SPI role name ("push button", "text", …).
	Role string `json:"role"`
	// Name is the accessible name.
	Name string `json:"name,omitempty"`
	// Value is the text of an entry or the current value of a slider; nil when the
	// element has none (and for password fields, which are never read).
	Value *string `json:"value,omitempty"`
	// Range is a Value element's minimum, maximum and step.
	Range *ValueRange `json:"range,omitempty"`
	// States are the states an agent is shown (focused, checked, disabled, …).
	States []string `json:"states,omitempty"`
	// Actions are the element's action names, lowercased.
	Actions []string `json:"actions,omitempty"`
	// Editable is true when the element implements EditableText.
	Editable bool `json:"editable,omitempty"`
	// Depth is the number of ancestors in the snapshot.
	Depth int `json:"depth"`
	// Parent is the index of the nearest ancestor in the snapshot; nil at the top.
	Parent *int `json:"parent_index,omitempty"`
	// Frame is the element's rectangle relative to the window's client area; nil when the
	// element is not a Component or is off screen.
	Frame *Rect `json:"frame,omitempty"`
	// ScreenFrame is the same rectangle in root (screen) coordinates.
	ScreenFrame *Rect `json:"screen_frame,omitempty"`

	ref     ref      // the accessible; zero for a window-geometry element
	ifaces  ifaceSet // interfaces it implements
	state   StateSet // its states at walk time
	actions []string // localized action names as GetActions gave them
}

// Accessible reports whether the element is an accessible object (false for the
// window-geometry element of a degraded snapshot).
func (e *Element) Accessible() bool { return e.ref.bus != "" }

// Interfaces lists the element's interfaces by short name ("Action", "Component", …).
func (e *Element) Interfaces() []string { return e.ifaces.names() }

// HasValue reports whether the element implements Value (sliders, spin buttons).
func (e *Element) HasValue() bool { return e.ifaces&hasValue != 0 }

// HasComponent reports whether the element implements Component (it has extents).
func (e *Element) HasComponent() bool { return e.ifaces&hasComponent != 0 }

// Snapshot is one walk of one window. It is immutable once returned.
type Snapshot struct {
	// ID is "s" and 8 hex digits; element tokens start with it.
	ID string
	// Window is the X window walked, as the caller described it.
	Window Window
	// App is the application's accessible name ("zenity").
	App string
	// Toolkit is the application's toolkit and its version, as it reports them ("GTK
	// 4.8.3"); empty when it does not.
	Toolkit string
	// Elements are the elements shown, in pre-order; Elements[i].Index == i.
	Elements []Element
	// Visited is how many accessible objects the walk read.
	Visited int
	// Calls is how many D-Bus calls the walk made.
	Calls int
	// Foreign counts children that belong to another application and were not walked.
	Foreign int
	// Truncated is true when a bound stopped the walk or cut its result; Reasons says which
	// (max_elements, max_depth, child_limit, deadline, not_responding).
	Truncated bool
	Reasons   []string
	// Degraded is true when the window has no accessible tree (no bus, an application
	// without accessibility, no matching window, not responding before the first answer):
	// the snapshot then holds one element for the window's geometry, and DegradedReason
	// says why ("atspi_no_application: …").
	Degraded       bool
	DegradedReason string
	// MatchedBy says how the accessible window was matched ("extents+title", …).
	MatchedBy string
	// Duration is the walk's wall time, including the window match.
	Duration time.Duration
	// Taken is when the walk ended.
	Taken time.Time
}

// Element returns element i, or ErrNoSuchElement.
func (s *Snapshot) Element(i int) (*Element, error) {
	if i < 0 || i >= len(s.Elements) {
		return nil, fmt.Errorf("%w: index %d: snapshot %s has %d elements", ErrNoSuchElement, i, s.ID, len(s.Elements))
	}
	return &s.Elements[i], nil
}

// DefaultSnapshotWindows is how many windows a Snapshots set remembers.
const DefaultSnapshotWindows = 16

// supersededMemory is how many superseded snapshot ids a set remembers, so that their
// tokens are reported as stale rather than unknown.
const supersededMemory = 256

// Snapshots is one session's snapshots: the latest per window, for a bounded number of
// windows (least recently used evicted). Taking a newer snapshot of a window makes every
// token of the older one stale. Its methods are safe for concurrent use.
type Snapshots struct {
	max int

	// mu guards the fields below.
	mu         sync.Mutex
	byWindow   map[uint32]*Snapshot
	byID       map[string]*Snapshot
	lru        []uint32          // windows, least recently used first
	superseded map[string]uint32 // old snapshot id → window
	oldOrder   []string          // superseded ids, oldest first
}

// NewSnapshots returns an empty set remembering up to maxWindows windows (≤ 0 means
// DefaultSnapshotWindows).
func NewSnapshots(maxWindows int) *Snapshots {
	if maxWindows <= 0 {
		maxWindows = DefaultSnapshotWindows
	}
	return &Snapshots{max: maxWindows, byWindow: map[uint32]*Snapshot{}, byID: map[string]*Snapshot{},
		superseded: map[string]uint32{}}
}

// Add records snap as the latest snapshot of its window, superseding the previous one.
func (s *Snapshots) Add(snap *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := snap.Window.ID
	if old, ok := s.byWindow[w]; ok {
		delete(s.byID, old.ID)
		s.rememberLocked(old.ID, w)
	}
	s.byWindow[w] = snap
	s.byID[snap.ID] = snap
	s.touchLocked(w)
	for len(s.lru) > s.max {
		ev := s.lru[0]
		s.lru = s.lru[1:]
		if old, ok := s.byWindow[ev]; ok {
			delete(s.byWindow, ev)
			delete(s.byID, old.ID)
		}
	}
}

func (s *Snapshots) rememberLocked(id string, w uint32) {
	s.superseded[id] = w
	s.oldOrder = append(s.oldOrder, id)
	for len(s.oldOrder) > supersededMemory {
		delete(s.superseded, s.oldOrder[0])
		s.oldOrder = s.oldOrder[1:]
	}
}

func (s *Snapshots) touchLocked(w uint32) {
	for i, x := range s.lru {
		if x == w {
			s.lru = append(s.lru[:i], s.lru[i+1:]...)
			break
		}
	}
	s.lru = append(s.lru, w)
}

// Latest returns the latest snapshot of window w.
func (s *Snapshots) Latest(w uint32) (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.byWindow[w]
	return snap, ok
}

// Resolve returns the snapshot and element t names. A superseded snapshot is ErrStale;
// an id this set never held (or evicted) is ErrUnknownSnapshot; an index outside the
// snapshot is ErrNoSuchElement.
func (s *Snapshots) Resolve(t Target) (*Snapshot, *Element, error) {
	if err := CheckSnapshotID(t.SnapshotID); err != nil {
		return nil, nil, err
	}
	if err := CheckIndex(t.Index); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	snap, ok := s.byID[t.SnapshotID]
	w, old := s.superseded[t.SnapshotID]
	if ok {
		s.touchLocked(snap.Window.ID)
	}
	s.mu.Unlock()
	switch {
	case old:
		return nil, nil, fmt.Errorf("%w: snapshot %s of window %d was replaced by a newer get_window_state; use the newer tokens", ErrStale, t.SnapshotID, w)
	case !ok:
		return nil, nil, fmt.Errorf("%w: %s is not a snapshot of this session (expired, or taken by another session)", ErrUnknownSnapshot, t.SnapshotID)
	}
	el, err := snap.Element(t.Index)
	if err != nil {
		return nil, nil, err
	}
	return snap, el, nil
}
