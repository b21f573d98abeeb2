package worker

import (
	"context"
	"fmt"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// requestConsent asks the host's consent provider about one operation on one resource and
// waits for its decision or ctx. It never grants on error.
func (w *worker) requestConsent(ctx context.Context, req *cuav1.ConsentRequest) (*cuav1.ConsentDecision, error) {
	ch := make(chan *cuav1.ConsentDecision, 1)
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		return nil, fmt.Errorf("worker is stopping")
	}
	w.nextCallID++
	id := w.nextCallID
	w.consentWaiters[id] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.consentWaiters, id)
		w.mu.Unlock()
	}()
	if !w.sendControl(id, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_ConsentRequest{ConsentRequest: req}}, nil) {
		return nil, fmt.Errorf("send consent request: control channel closed")
	}
	select {
	case d, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("control channel closed while waiting for consent")
		}
		return d, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliverConsent routes a ConsentDecision to the request waiting for it. A decision for an
// unknown call id (late, or never asked) is dropped: it can grant nothing.
func (w *worker) deliverConsent(callID uint64, d *cuav1.ConsentDecision) {
	w.mu.Lock()
	ch := w.consentWaiters[callID]
	delete(w.consentWaiters, callID)
	w.mu.Unlock()
	if ch == nil {
		w.log.Debug("consent decision for no pending request", "call_id", callID)
		return
	}
	ch <- d
}
