package atspi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// Menu bounds.
const (
	// MaxMenuDepth is the most segments a menu path may have.
	MaxMenuDepth = 16
	// menuBarDepth is how deep below the window the menu bar is looked for.
	menuBarDepth = 12
	// menuBarVisits bounds the objects read while looking for the menu bar.
	menuBarVisits = 3000
	// menuOpenTimeout bounds the wait for a submenu to open after its item was activated.
	menuOpenTimeout = 2 * time.Second
	// menuPoll is the pause between two looks at a submenu that is opening.
	menuPoll = 25 * time.Millisecond
	// maxMenuItems bounds the items read of one menu level.
	maxMenuItems = 256
)

// menuItemRoles are the roles of a menu's entries; anything else (separators, the
// labels and images inside an item) is not an entry.
var menuItemRoles = map[string]bool{
	"menu": true, "menu item": true, "check menu item": true, "radio menu item": true, "tearoff menu item": true,
}

// Why a menu path segment failed.
const (
	// MenuMissing: no entry of the level has the segment's name.
	MenuMissing = "missing"
	// MenuAmbiguous: several entries have it.
	MenuAmbiguous = "ambiguous"
	// MenuDisabled: the entry exists and is disabled.
	MenuDisabled = "disabled"
	// MenuNotSubmenu: a segment before the last names an item without a submenu.
	MenuNotSubmenu = "not_a_submenu"
	// MenuIsSubmenu: the last segment names a submenu, not an item to invoke.
	MenuIsSubmenu = "is_a_submenu"
	// MenuDidNotOpen: the submenu of the previous segment did not open.
	MenuDidNotOpen = "did_not_open"
)

// MenuError says which segment of a menu path could not be resolved, why, and what the
// level held instead. It wraps ErrMenuPath.
type MenuError struct {
	// Hop is the 0-based index of the segment in the path.
	Hop int
	// Segment is the path's text for it.
	Segment string
	// Reason is one of MenuMissing, MenuAmbiguous, MenuDisabled, MenuNotSubmenu,
	// MenuIsSubmenu, MenuDidNotOpen.
	Reason string
	// Available are the names of the level's entries, in order ("" for unnamed ones are
	// left out).
	Available []string
}

// Error describes the failure for people.
func (e *MenuError) Error() string {
	var what string
	switch e.Reason {
	case MenuMissing:
		what = "no entry is named so"
	case MenuAmbiguous:
		what = "several entries are named so"
	case MenuDisabled:
		what = "the entry is disabled"
	case MenuNotSubmenu:
		what = "the entry has no submenu, so the path cannot go on below it"
	case MenuIsSubmenu:
		what = "the entry opens a submenu; name an item inside it"
	case MenuDidNotOpen:
		what = "its submenu did not open"
	default:
		what = e.Reason
	}
	level := "the menu bar"
	if e.Hop > 0 {
		level = fmt.Sprintf("the menu of path[%d]", e.Hop-1)
	}
	return fmt.Sprintf("%v: path[%d] %q in %s: %s (entries: %s)", ErrMenuPath, e.Hop, e.Segment, level, what, quoteList(e.Available))
}

// Unwrap returns ErrMenuPath.
func (e *MenuError) Unwrap() error { return ErrMenuPath }

func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// MenuStep is one resolved segment of a menu path.
type MenuStep struct {
	// Segment is the path's text; Name the entry's accessible name it matched.
	Segment string `json:"segment"`
	Name    string `json:"name"`
	// Role is the entry's role ("menu", "menu item", "check menu item", …).
	Role string `json:"role"`
	// MatchedBy is "exact" or "case_insensitive".
	MatchedBy string `json:"matched_by"`
	// Action is the action performed on the entry; Returned the toolkit's reply.
	Action   string `json:"action"`
	Returned bool   `json:"returned"`
	// OpenedMS is, for a submenu, how long it took to open.
	OpenedMS float64 `json:"opened_ms,omitempty"`
}

// MenuOutcome is what InvokeMenu did.
type MenuOutcome struct {
	// App is the application's accessible name.
	App string `json:"app,omitempty"`
	// Steps are the resolved segments, in path order; every one was acted on.
	Steps []MenuStep `json:"steps"`
	// Closed is true when, after the last item was invoked, no entry of the menu bar had
	// its menu open any more (the toolkit closed the menus as it does when an item runs).
	Closed bool `json:"menus_closed"`
	// ClosedAfter is, when the toolkit left menus open, whether InvokeMenu closed them.
	ClosedAfter bool `json:"menus_closed_after,omitempty"`
}

// menuEntry is one entry of a menu level as the application reports it now.
type menuEntry struct {
	n *node
}

func (m menuEntry) name() string { return strings.TrimSpace(m.n.name) }

func (m menuEntry) enabled() bool { return m.n.state&(StateEnabled|StateSensitive) != 0 }

func (m menuEntry) showing() bool { return m.n.state.Has(StateShowing) }

// submenu reports whether the entry opens a menu of its own.
func (m menuEntry) submenu() bool { return m.n.role == "menu" }

// menuSession is one InvokeMenu's connection.
type menuSession struct {
	c    *Client
	conn *dbus.Conn
}

// InvokeMenu resolves path in the menu bar of window w's application one level at a
// time, against what the application reports at that moment, and invokes the last entry:
// it finds the menu bar entry named path[0] and activates it, waits for its menu to open,
// finds path[1] among the entries now there, and so on. Names are compared after trimming
// surrounding white space, exactly first and then ignoring case; a segment that matches
// no entry, several entries or a disabled one, a segment before the last without a
// submenu and a last segment with one all fail with a *MenuError, after which nothing
// further is activated and the menus this call opened are closed again.
//
// Errors before any entry was activated (no bus, an application without accessibility,
// a window without a menu bar, path[0] not found) mean nothing happened.
func (c *Client) InvokeMenu(ctx context.Context, w Window, path []string) (MenuOutcome, error) {
	var out MenuOutcome
	if len(path) == 0 || len(path) > MaxMenuDepth {
		return out, fmt.Errorf("%w: a menu path has 1 to %d segments, not %d", ErrInvalidMenuPath, MaxMenuDepth, len(path))
	}
	for i, s := range path {
		if strings.TrimSpace(s) == "" {
			return out, fmt.Errorf("%w: path[%d] is empty", ErrInvalidMenuPath, i)
		}
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return out, err
	}
	ms := &menuSession{c: c, conn: conn}
	var scratch Snapshot
	top, err := c.findWindow(ctx, conn, w, &scratch)
	if err != nil {
		return out, err
	}
	out.App = scratch.App
	bar, err := ms.findMenuBar(ctx, top)
	if err != nil {
		return out, err
	}
	level := bar
	var opened []menuEntry // submenus this call opened, outermost first
	fail := func(err error) (MenuOutcome, error) {
		ms.closeMenus(ctx, bar, opened)
		return out, err
	}
	for hop, seg := range path {
		entries, err := ms.entries(ctx, level)
		if err != nil {
			return fail(err)
		}
		if hop > 0 {
			start := time.Now()
			entries, err = ms.awaitOpen(ctx, level, entries)
			if err != nil {
				return fail(err)
			}
			if !anyShowing(entries) {
				return fail(&MenuError{Hop: hop, Segment: seg, Reason: MenuDidNotOpen, Available: names(entries)})
			}
			out.Steps[hop-1].OpenedMS = float64(time.Since(start).Microseconds()) / 1000
		}
		// Entries that are not shown (hidden items of an open menu) are not there for a
		// person either.
		entries = shown(entries)
		e, how, merr := match(entries, seg, hop)
		if merr != nil {
			return fail(merr)
		}
		last := hop == len(path)-1
		if err := fits(e, hop, seg, last, entries); err != nil {
			return fail(err)
		}
		step := MenuStep{Segment: seg, Name: e.name(), Role: e.n.role, MatchedBy: how}
		el := &Element{Role: e.n.role, Name: e.n.name, ref: e.n.ref, ifaces: e.n.ifaces}
		idx, action, err := c.findAction(ctx, conn, el, PressClick)
		if err != nil {
			return fail(err)
		}
		step.Action = action
		var ok bool
		if err := c.call(ctx, conn, e.n.ref, ifaceAction+".DoAction", []any{int32(idx)}, &ok); err != nil {
			if hop == 0 {
				return out, err
			}
			return fail(fmt.Errorf("%w (after opening %d menus)", err, hop))
		}
		step.Returned = ok
		out.Steps = append(out.Steps, step)
		if !last {
			opened = append(opened, e)
			level = e.n
		}
	}
	out.Closed = ms.menusClosed(ctx, bar)
	if !out.Closed {
		ms.closeMenus(ctx, bar, opened)
		out.ClosedAfter = ms.menusClosed(ctx, bar)
	}
	return out, nil
}

// match finds seg among entries: exactly after trimming, else ignoring case.
func match(entries []menuEntry, seg string, hop int) (menuEntry, string, error) {
	want := strings.TrimSpace(seg)
	var exact, folded []menuEntry
	for _, e := range entries {
		switch n := e.name(); {
		case n == want:
			exact = append(exact, e)
		case strings.EqualFold(n, want):
			folded = append(folded, e)
		}
	}
	for _, c := range []struct {
		found []menuEntry
		how   string
	}{{exact, "exact"}, {folded, "case_insensitive"}} {
		switch len(c.found) {
		case 0:
			continue
		case 1:
			return c.found[0], c.how, nil
		}
		return menuEntry{}, "", &MenuError{Hop: hop, Segment: seg, Reason: MenuAmbiguous, Available: names(entries)}
	}
	return menuEntry{}, "", &MenuError{Hop: hop, Segment: seg, Reason: MenuMissing, Available: names(entries)}
}

// fits checks that entry e, matched for segment seg, may be acted on at this place of
// the path: it is enabled, it has a submenu unless it is the last segment, and the last
// segment is an item, not a submenu.
func fits(e menuEntry, hop int, seg string, last bool, entries []menuEntry) error {
	reason := ""
	switch {
	case !e.enabled():
		reason = MenuDisabled
	case !last && !e.submenu():
		reason = MenuNotSubmenu
	case last && e.submenu():
		reason = MenuIsSubmenu
	default:
		return nil
	}
	return &MenuError{Hop: hop, Segment: seg, Reason: reason, Available: names(entries)}
}

func names(entries []menuEntry) []string {
	var out []string
	for _, e := range entries {
		if n := e.name(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// shown returns the entries that are showing.
func shown(entries []menuEntry) []menuEntry {
	var out []menuEntry
	for _, e := range entries {
		if e.showing() {
			out = append(out, e)
		}
	}
	return out
}

func anyShowing(entries []menuEntry) bool {
	for _, e := range entries {
		if e.showing() {
			return true
		}
	}
	return false
}

// describe reads the info (role, name, states, interfaces, child count) of refs.
func (ms *menuSession) describe(ctx context.Context, refs []ref) ([]*node, error) {
	wk := &walker{p: newPipeline(ms.conn, ms.c.callTimeout), seen: map[ref]bool{}}
	nodes := make([]*node, len(refs))
	for i, r := range refs {
		nodes[i] = &node{ref: r}
		wk.info(nodes[i], nil)
	}
	if err := wk.p.run(ctx); err != nil {
		return nil, fmt.Errorf("%w: %s did not answer within %s", ErrNotResponding, refsBus(refs), ms.c.callTimeout)
	}
	return nodes, nil
}

func refsBus(refs []ref) string {
	if len(refs) == 0 {
		return "the application"
	}
	return refs[0].bus
}

// children returns n's children that are objects of n's own application.
func (ms *menuSession) children(ctx context.Context, n *node) ([]ref, error) {
	var kids []struct {
		Bus  string
		Path dbus.ObjectPath
	}
	if err := ms.c.call(ctx, ms.conn, n.ref, ifaceAccessible+".GetChildren", nil, &kids); err != nil {
		return nil, err
	}
	out := make([]ref, 0, len(kids))
	for _, k := range kids {
		if k.Bus != n.ref.bus || k.Path == "" || k.Path == "/org/a11y/atspi/null" {
			continue
		}
		out = append(out, ref{bus: k.Bus, path: k.Path})
	}
	return out, nil
}

// findMenuBar looks breadth first below the window for a showing menu bar.
func (ms *menuSession) findMenuBar(ctx context.Context, top *node) (*node, error) {
	if top.role == "menu bar" {
		return top, nil
	}
	level := []*node{top}
	visited := 1
	for depth := 0; depth < menuBarDepth && len(level) > 0; depth++ {
		var refs []ref
		for _, n := range level {
			if n.childCount <= 0 || (n != top && !n.state.Has(StateShowing)) {
				continue
			}
			kids, err := ms.children(ctx, n)
			if err != nil {
				return nil, err
			}
			refs = append(refs, kids...)
			if visited+len(refs) > menuBarVisits {
				return nil, fmt.Errorf("%w: no menu bar among the first %d objects of the window", ErrNoMenuBar, menuBarVisits)
			}
		}
		next, err := ms.describe(ctx, refs)
		if err != nil {
			return nil, err
		}
		visited += len(next)
		for _, n := range next {
			if n.role == "menu bar" && n.state.Has(StateShowing) && !n.state.Has(StateDefunct) {
				return n, nil
			}
		}
		level = next
	}
	return nil, fmt.Errorf("%w: the window's accessible tree (%d objects read) has no showing menu bar", ErrNoMenuBar, visited)
}

// entries reads the entries of a menu bar or menu now.
func (ms *menuSession) entries(ctx context.Context, menu *node) ([]menuEntry, error) {
	refs, err := ms.children(ctx, menu)
	if err != nil {
		return nil, err
	}
	if len(refs) > maxMenuItems {
		refs = refs[:maxMenuItems]
	}
	nodes, err := ms.describe(ctx, refs)
	if err != nil {
		return nil, err
	}
	var out []menuEntry
	for _, n := range nodes {
		if n.roleKnown && menuItemRoles[n.role] && !n.state.Has(StateDefunct) {
			out = append(out, menuEntry{n: n})
		}
	}
	return out, nil
}

// awaitOpen waits until menu's entries are showing (its menu has opened), reading them
// again every menuPoll, for at most menuOpenTimeout. It returns the entries last read.
func (ms *menuSession) awaitOpen(ctx context.Context, menu *node, entries []menuEntry) ([]menuEntry, error) {
	deadline := time.Now().Add(menuOpenTimeout)
	t := time.NewTimer(menuPoll)
	defer t.Stop()
	for !anyShowing(entries) && time.Now().Before(deadline) {
		t.Reset(menuPoll)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		var err error
		if entries, err = ms.entries(ctx, menu); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// menusClosed waits briefly for the toolkit to close the menus after an item ran and
// reports whether no menu bar entry is expanded or selected any more.
func (ms *menuSession) menusClosed(ctx context.Context, bar *node) bool {
	deadline := time.Now().Add(menuOpenTimeout)
	for {
		entries, err := ms.entries(ctx, bar)
		if err != nil {
			return false
		}
		open := false
		for _, e := range entries {
			if e.n.state&(StateExpanded|StateSelected) != 0 {
				open = true
			}
		}
		if !open {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(menuPoll):
		}
	}
}

// closeMenus closes the menus a failed InvokeMenu opened: the menu bar's selection is
// cleared (which closes an open menu in GTK), else the top entry's action is performed
// again (which toggles its menu). Failures are ignored: this is cleanup after a refusal.
func (ms *menuSession) closeMenus(ctx context.Context, bar *node, opened []menuEntry) {
	if len(opened) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), menuOpenTimeout)
	defer cancel()
	if bar.ifaces&hasSelection != 0 {
		var ok bool
		if ms.c.call(ctx, ms.conn, bar.ref, ifaceSelection+".ClearSelection", nil, &ok) == nil && ok {
			if ms.menusClosed(ctx, bar) {
				return
			}
		}
	}
	el := &Element{Role: opened[0].n.role, Name: opened[0].n.name, ref: opened[0].n.ref, ifaces: opened[0].n.ifaces}
	if idx, _, err := ms.c.findAction(ctx, ms.conn, el, PressClick); err == nil {
		var ok bool
		_ = ms.c.call(ctx, ms.conn, el.ref, ifaceAction+".DoAction", []any{int32(idx)}, &ok)
		ms.menusClosed(ctx, bar)
	}
}

// MenuPathError reports whether err is a path segment that could not be resolved, and
// returns it.
func MenuPathError(err error) (*MenuError, bool) {
	var me *MenuError
	ok := errors.As(err, &me)
	return me, ok
}
