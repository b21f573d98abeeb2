package x11

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// windowCache keeps the description of each listed window while no event says it may have
// changed, so a read of the window list asks the server only for the client list, the
// active window and the windows that changed: one round trip when nothing did.
//
// What a description holds comes from the window and the windows above it up to the root:
// its properties (names, class, state, pid), its size and map state, and the positions of
// every window between it and the root. The backend selects the events that announce each
// of those changes — PropertyNotify and the structure events on the window, the structure
// events on each ancestor — when a window is first listed, and before it is first
// described. Any such event marks the window's description stale. A read waits for the
// event loop to handle every event the server sent before the read (eventBarrier), so a
// description it reuses is as current as one it would have asked for.
type windowCache struct {
	// readMu serialises the reads: a description marked valid is being read until its read
	// is stored.
	readMu sync.Mutex

	// mu guards the maps; the event loop takes it briefly, and nothing holds it across a
	// round trip.
	mu      sync.Mutex
	entries map[xproto.Window]*cachedWindow
	// ancestors maps each watched ancestor to the listed windows below it.
	ancestors map[xproto.Window][]xproto.Window

	// described are the client properties a description reads. Fixed at init: the event
	// loop cannot intern atoms.
	described map[xproto.Atom]bool

	// reads counts the windows described from the server.
	reads atomic.Uint64
}

// cachedWindow is one listed window's entry.
type cachedWindow struct {
	desc Window // as last read; Focused and Stack are set per read
	have bool   // desc was read and the window existed
	// valid is cleared by any event about the window or its ancestors since desc was
	// asked for.
	valid bool
	// watched is set once the window's events are selected, and cleared when it or an
	// ancestor is reparented or destroyed (chain is then out of date).
	watched bool
	chain   []xproto.Window // ancestors below the root, nearest first
}

// Event masks selected on listed windows and their ancestors.
const (
	clientWatchMask   = xproto.EventMaskStructureNotify | xproto.EventMaskPropertyChange
	ancestorWatchMask = xproto.EventMaskStructureNotify
	// maxAncestry bounds the walk up from a window (window managers nest two or three).
	maxAncestry = 16
)

// init interns the described properties' atoms. It runs in Open, before the event loop.
func (c *windowCache) init(a *atomCache) {
	c.entries = map[xproto.Window]*cachedWindow{}
	c.ancestors = map[xproto.Window][]xproto.Window{}
	c.described = map[xproto.Atom]bool{
		xproto.AtomWmName: true, xproto.AtomWmClass: true,
		a.get("_NET_WM_NAME"): true, a.get("_NET_WM_STATE"): true, a.get("_NET_WM_PID"): true, a.get("WM_STATE"): true,
		a.get("WM_PROTOCOLS"): true,
	}
	delete(c.described, 0)
}

// note marks stale the descriptions an event may have changed. It runs on the event loop.
func (c *windowCache) note(ev xgb.Event) {
	var w xproto.Window
	structural, destroyed := false, false
	switch e := ev.(type) {
	case xproto.PropertyNotifyEvent:
		if !c.described[e.Atom] {
			return
		}
		c.mu.Lock()
		if en := c.entries[e.Window]; en != nil {
			en.valid = false
		}
		c.mu.Unlock()
		return
	case xproto.ConfigureNotifyEvent:
		w = e.Window
	case xproto.MapNotifyEvent:
		w = e.Window
	case xproto.UnmapNotifyEvent:
		w = e.Window
	case xproto.GravityNotifyEvent:
		w = e.Window
	case xproto.CirculateNotifyEvent:
		w = e.Window
	case xproto.ReparentNotifyEvent:
		w, structural = e.Window, true
	case xproto.DestroyNotifyEvent:
		w, structural, destroyed = e.Window, true, true
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if en := c.entries[w]; en != nil {
		en.valid = false
		en.watched = en.watched && !structural
		if destroyed {
			c.forgetLocked(w)
		}
	}
	for _, id := range c.ancestors[w] {
		if en := c.entries[id]; en != nil {
			en.valid = false
			en.watched = en.watched && !structural
		}
	}
	if destroyed {
		delete(c.ancestors, w)
	}
}

// forgetLocked drops window id's entry and its place under its ancestors.
func (c *windowCache) forgetLocked(id xproto.Window) {
	if en := c.entries[id]; en != nil {
		c.unchainLocked(id, en.chain)
	}
	delete(c.entries, id)
}

// unchainLocked removes id from the lists of the ancestors in chain.
func (c *windowCache) unchainLocked(id xproto.Window, chain []xproto.Window) {
	for _, a := range chain {
		below := slices.DeleteFunc(c.ancestors[a], func(x xproto.Window) bool { return x == id })
		if len(below) == 0 {
			delete(c.ancestors, a)
		} else {
			c.ancestors[a] = below
		}
	}
}

// describe returns the descriptions of ids in their order (with have set for the windows
// that exist), reading from the server those the cache cannot vouch for; fresh says the
// event barrier was reached, without which every one is read. With prune, entries of
// windows not in ids are dropped (ids is the whole list). Focused and Stack are not set.
// The caller holds readMu.
func (c *windowCache) describe(ctx context.Context, b *Backend, ids []xproto.Window, fresh, prune bool) ([]cachedWindow, error) {
	var watch, read []xproto.Window
	c.mu.Lock()
	if prune {
		for id := range c.entries {
			if !slices.Contains(ids, id) {
				c.forgetLocked(id)
			}
		}
	}
	for _, id := range ids {
		en := c.entries[id]
		if en == nil {
			en = &cachedWindow{}
			c.entries[id] = en
		}
		if !en.watched {
			en.watched, en.valid = true, false
			watch = append(watch, id)
		}
		if !fresh || !en.valid || !en.have {
			// Valid from now on unless an event says otherwise: the description is asked
			// for after this, so an event it does not reflect comes after this too.
			en.valid = true
			read = append(read, id)
		}
	}
	c.mu.Unlock()
	if len(watch) > 0 {
		c.watch(b, watch)
	}
	pending := make([]describeCookies, len(read))
	for i, id := range read {
		pending[i] = b.sendDescribe(id)
	}
	got := make([]Window, len(read))
	errs := make([]error, len(read))
	for i := range pending {
		got[i], errs[i] = pending[i].collect()
	}
	c.reads.Add(uint64(len(read)))
	out := make([]cachedWindow, len(ids))
	c.mu.Lock()
	defer c.mu.Unlock()
	// What was read is stored even when ctx ended meanwhile: the entries were marked valid
	// for this read.
	for i, id := range read {
		en := c.entries[id]
		if en == nil {
			continue // destroyed meanwhile
		}
		if errs[i] != nil {
			en.have, en.valid = false, false
			continue
		}
		en.desc, en.have = got[i], true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		if en := c.entries[id]; en != nil && en.have {
			out[i] = cachedWindow{desc: en.desc, have: true}
		}
	}
	return out, nil
}

// watch selects the events of windows ids and of their ancestors, and records each
// window's ancestry. A window's own events are selected before its ancestry is read, so a
// reparenting meanwhile is seen.
func (c *windowCache) watch(b *Backend, ids []xproto.Window) {
	for _, id := range ids {
		xproto.ChangeWindowAttributes(b.conn, id, xproto.CwEventMask, []uint32{clientWatchMask})
	}
	chains := make([][]xproto.Window, len(ids))
	cur := slices.Clone(ids)
	failed := make([]bool, len(ids))
	walking := make([]int, len(ids))
	for i := range walking {
		walking[i] = i
	}
	for depth := 0; len(walking) > 0 && depth < maxAncestry; depth++ {
		cookies := make([]xproto.QueryTreeCookie, len(walking))
		for k, i := range walking {
			cookies[k] = xproto.QueryTree(b.conn, cur[i])
		}
		next := walking[:0]
		for k, i := range walking {
			r, err := cookies[k].Reply()
			if err != nil {
				failed[i] = true
				continue
			}
			if r.Parent == b.root || r.Parent == 0 {
				continue
			}
			xproto.ChangeWindowAttributes(b.conn, r.Parent, xproto.CwEventMask, []uint32{ancestorWatchMask})
			chains[i] = append(chains[i], r.Parent)
			cur[i] = r.Parent
			next = append(next, i)
		}
		for _, i := range next {
			if len(chains[i]) == maxAncestry {
				failed[i] = true
			}
		}
		walking = next
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		en := c.entries[id]
		if en == nil {
			continue
		}
		c.unchainLocked(id, en.chain)
		en.chain = nil
		if failed[i] {
			// Gone, or nested beyond reason: watched again at the next read, and read.
			en.watched, en.valid = false, false
			continue
		}
		en.chain = chains[i]
		for _, a := range chains[i] {
			if !slices.Contains(c.ancestors[a], id) {
				c.ancestors[a] = append(c.ancestors[a], id)
			}
		}
	}
}
