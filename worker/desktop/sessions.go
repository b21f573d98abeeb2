package desktop

import (
	"container/list"
	"sync"
	"weak"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// maxSessions bounds the sessions whose snapshots are kept; the least recently used
// session's snapshots go first (its tokens then fail as stale).
const maxSessions = 64

// sessionStore keeps each session's snapshots, so that element tokens are per session: a
// token is looked up only among the calling session's snapshots. Sessions are held
// weakly: a session the worker dropped loses its snapshots.
type sessionStore struct {
	// mu guards the fields below.
	mu   sync.Mutex
	byS  map[weak.Pointer[tool.Session]]*list.Element
	lru  *list.List       // of *sessionSnaps, most recently used first
	anon *atspi.Snapshots // calls without a session (tests)
}

type sessionSnaps struct {
	key   weak.Pointer[tool.Session]
	snaps *atspi.Snapshots
}

func newSessionStore() *sessionStore {
	return &sessionStore{byS: map[weak.Pointer[tool.Session]]*list.Element{}, lru: list.New(), anon: atspi.NewSnapshots(0)}
}

// of returns the snapshots of session s.
func (st *sessionStore) of(s *tool.Session) *atspi.Snapshots {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s == nil {
		return st.anon
	}
	key := weak.Make(s)
	if e, ok := st.byS[key]; ok {
		st.lru.MoveToFront(e)
		return e.Value.(*sessionSnaps).snaps
	}
	for e := st.lru.Front(); e != nil; { // forget collected sessions
		next := e.Next()
		if ss := e.Value.(*sessionSnaps); ss.key.Value() == nil {
			delete(st.byS, ss.key)
			st.lru.Remove(e)
		}
		e = next
	}
	for st.lru.Len() >= maxSessions {
		old := st.lru.Remove(st.lru.Back()).(*sessionSnaps)
		delete(st.byS, old.key)
	}
	ss := &sessionSnaps{key: key, snaps: atspi.NewSnapshots(0)}
	st.byS[key] = st.lru.PushFront(ss)
	return ss.snaps
}
