package serve

import (
	"context"
	"sync"
	"time"

	"github.com/cua-host/cua-host/host"
)

// ConsentRequest is the consent_request notification's params.
type ConsentRequest struct {
	// ID pairs the request with the app's consent_decision.
	ID          uint64 `json:"id"`
	Session     string `json:"session"`
	TrustDomain string `json:"trust_domain"`
	Tool        string `json:"tool"`
	// Resource names exactly what a grant covers ("window:pid=…,id=…", "display", …).
	Resource    string `json:"resource"`
	Operation   string `json:"operation"`
	Description string `json:"description,omitempty"`
	Title       string `json:"title,omitempty"`
	Executable  string `json:"executable,omitempty"`
	PID         int    `json:"pid,omitempty"`
	Command     string `json:"command,omitempty"`
	// DeadlineUnixMS is when an unanswered request becomes a deny.
	DeadlineUnixMS int64 `json:"deadline_unix_ms"`
}

// consentBroker turns the workers' consent requests into consent_request notifications
// and waits for the app's consent_decision; no answer by the deadline is a deny.
type consentBroker struct {
	timeout time.Duration
	notify  func(method string, params any)

	// mu guards the fields below.
	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan host.ConsentDecision
	closed  bool
}

func newConsentBroker(timeout time.Duration, notify func(string, any)) *consentBroker {
	return &consentBroker{timeout: timeout, notify: notify, waiting: map[uint64]chan host.ConsentDecision{}}
}

// ask is a host.ConsentFunc for the trust domain named domain.
func (b *consentBroker) ask(ctx context.Context, domain string, r host.ConsentRequest) host.ConsentDecision {
	ch := make(chan host.ConsentDecision, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return host.ConsentDecision{Unavailable: true} // nobody is there to ask
	}
	b.next++
	id := b.next
	b.waiting[id] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
	}()
	deadline := time.Now().Add(b.timeout)
	b.notify("consent_request", ConsentRequest{
		ID: id, Session: r.Session, TrustDomain: domain, Tool: r.Tool, Resource: r.Resource, Operation: r.Operation,
		Description: r.Description, Title: r.Title, Executable: r.Executable, PID: r.PID, Command: r.Command,
		DeadlineUnixMS: deadline.UnixMilli(),
	})
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case d, ok := <-ch:
		if ok {
			return d
		}
		return host.ConsentDecision{Unavailable: true}
	case <-t.C:
	case <-ctx.Done():
	}
	return host.ConsentDecision{} // a deny
}

// decide delivers the app's answer; false when no request with that id is waiting.
func (b *consentBroker) decide(id uint64, granted bool, ttl time.Duration) bool {
	b.mu.Lock()
	ch := b.waiting[id]
	delete(b.waiting, id)
	b.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- host.ConsentDecision{Granted: granted, TTL: ttl}
	return true
}

// pending counts the requests waiting for an answer.
func (b *consentBroker) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

// closeAll answers every waiting request and every later one with "nobody can be asked"
// (authorization_required): the app is gone.
func (b *consentBroker) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for id, ch := range b.waiting {
		close(ch)
		delete(b.waiting, id)
	}
}
