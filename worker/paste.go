package worker

import (
	"context"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/x11"
)

// selectionOwners is the part of a desktop that tells who owns a selection.
// *x11.Backend implements it; a desktop without it makes every paste a clipboard read.
type selectionOwners interface {
	// SelectionOwner returns the server-observed pid of the client owning the selection
	// name, and whether it has an owner.
	SelectionOwner(ctx context.Context, name string) (pid int, owned bool, err error)
}

// withPaste adds a clipboard observation to a resolved input call that pastes, as its tool
// declares (tool.Touches.Pastes, read from the call's decoded struct c: the keys ctrl+v,
// shift+Insert or XF86Paste, or a middle button). Arguments that do not decode paste
// nothing: the handler refuses them before it sends anything. A paste moves the selection's
// contents into a window the session can then read, so it is decided as a read of the
// clipboard — unless every selection it may read is unowned or owned by the session
// itself (this worker, or a process the session launched): pasting what the session put
// there reveals nothing.
func (r *resolver) withPaste(ctx context.Context, s *session, tool string, c *callArgs, res resolution) resolution {
	if res.Unresolved != nil || res.SelfPID != 0 || res.ProtectedUIPID != 0 {
		return res
	}
	if pastes := r.touches[tool].Pastes; pastes == nil || c.typed == nil || c.err != nil || !pastes(c.typed) {
		return res
	}
	if r.selectionsOwnedBySession(ctx, s) {
		return res
	}
	res.Also = append(res.Also, authz.Resource{Kind: authz.ResourceClipboard, Op: authz.OpObserve})
	return res
}

// selectionsOwnedBySession reports whether every selection a paste may read is unowned or
// owned by this worker or a process the session launched. Anything it cannot tell is
// someone else's.
func (r *resolver) selectionsOwnedBySession(ctx context.Context, s *session) bool {
	owners, ok := r.desk.(selectionOwners)
	if !ok {
		return false
	}
	for _, sel := range x11.PasteSelections {
		pid, owned, err := owners.SelectionOwner(ctx, sel)
		switch {
		case err != nil:
			return false
		case !owned || pid == r.selfPID:
		case pid > 0 && r.owned(s, pid, r.procs.read(pid)):
		default:
			return false
		}
	}
	return true
}
