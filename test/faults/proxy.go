package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// agent speaks MCP (newline-delimited JSON-RPC) to a proxy over its stdio.
type agent struct {
	in  *os.File // the proxy's stdin, our end
	out *os.File // the proxy's stdout, our end

	// mu guards the fields below.
	mu      sync.Mutex
	nextID  int
	waiters map[int]chan json.RawMessage
	sendMu  sync.Mutex
	// done is closed when the proxy's stdout reached end-of-file.
	done chan struct{}
}

func newAgent(in, out *os.File) *agent {
	a := &agent{in: in, out: out, waiters: map[int]chan json.RawMessage{}, done: make(chan struct{})}
	go a.read()
	return a
}

func (a *agent) read() {
	defer close(a.done)
	sc := bufio.NewScanner(a.out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		a.mu.Lock()
		ch := a.waiters[*msg.ID]
		delete(a.waiters, *msg.ID)
		a.mu.Unlock()
		if ch != nil {
			ch <- append(json.RawMessage(nil), sc.Bytes()...)
		}
	}
}

func (a *agent) notify(method string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	return a.write(b)
}

func (a *agent) write(b []byte) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	a.in.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, err := a.in.Write(append(b, '\n'))
	return err
}

// request sends one request and waits up to timeout for its response; nil without one.
func (a *agent) request(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	ch := make(chan json.RawMessage, 1)
	a.waiters[id] = ch
	a.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := a.write(b); err != nil {
		a.forget(id)
		return nil, fmt.Errorf("write: %w", err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-t.C:
		a.forget(id)
		return nil, fmt.Errorf("no response in %v", timeout)
	case <-a.done:
		a.forget(id)
		return nil, fmt.Errorf("proxy stdout closed")
	}
}

func (a *agent) forget(id int) {
	a.mu.Lock()
	delete(a.waiters, id)
	a.mu.Unlock()
}

// proxyRound runs a worker, one session bound to an MCP proxy process, and agents
// calling marker through MCP, then kills or stops the proxy (or kills the worker under
// it). Every response's outcome must agree with the marker file; a call without a
// response is unknown to the agent; the session the proxy held ends on the worker when
// the proxy dies; every process is reaped.
func proxyRound(ctx context.Context, t *tally, r *rand.Rand, n int, dir string) {
	f := fault(1 + r.IntN(3))
	target := "proxy"
	if r.IntN(4) == 0 {
		target, f = "worker", faultKill
	}
	round := fmt.Sprintf("proxy round %d (%v of the %s)", n, f, target)
	t.mu.Lock()
	if target == "proxy" {
		t.rounds["proxy "+f.String()+" (agent calling over MCP)"]++
	} else {
		t.rounds["worker "+f.String()+" under a proxy"]++
	}
	t.mu.Unlock()
	path := filepath.Join(dir, fmt.Sprintf("markers-p%d", n))

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	h, err := host.Start(sctx, host.Options{CloseGrace: 100 * time.Millisecond})
	if err != nil {
		t.violate("%s: start: %v", round, err)
		return
	}
	defer h.Close()
	observer, err := h.CreateSession(sctx, host.SessionSpec{Label: "observer"})
	if err != nil {
		t.violate("%s: observer session: %v", round, err)
		return
	}
	proxyEnd, workerEnd, err := wire.SessionPair()
	if err != nil {
		t.violate("%s: %v", round, err)
		return
	}
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	logf, _ := os.CreateTemp(dir, "proxy-log-")
	px, err := host.StartProxy(host.ProxyOptions{Session: proxyEnd, Stdin: inR, Stdout: outW, Stderr: logf, CloseGrace: 200 * time.Millisecond})
	inR.Close()
	outW.Close()
	if err != nil {
		workerEnd.Close()
		inW.Close()
		outR.Close()
		t.violate("%s: start proxy: %v", round, err)
		return
	}
	ppid, wpid := px.PID(), h.PID()
	a := newAgent(inW, outR)
	defer func() {
		inW.Close() // the agent's end-of-file: the proxy exits
		px.Close()
		outR.Close()
		<-a.done
		h.Close()
		logf.Close()
		if b, _ := os.ReadFile(logf.Name()); strings.Contains(string(b), "panic:") || strings.Contains(string(b), "fatal error:") {
			t.violate("%s: proxy stderr shows a crash:\n%s", round, b)
		}
		t.accountProcesses(round, ppid, wpid)
	}()
	if _, err := h.CreateSessionOn(sctx, host.SessionSpec{Label: "proxied"}, workerEnd); err != nil {
		t.violate("%s: bind the proxy's session: %v", round, err)
		return
	}
	if err := px.Activate(contract.Bootstrap{Generation: h.GenerationBytes(), Version: h.ProtocolVersion()}); err != nil {
		t.violate("%s: activate: %v", round, err)
		return
	}
	if _, err := a.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "faults", "version": "0"}}, 5*time.Second); err != nil {
		t.violate("%s: MCP initialize: %v", round, err)
		return
	}
	a.notify("notifications/initialized")

	victim := ppid
	if target == "worker" {
		victim = wpid
	}
	var hit atomic.Bool
	waitInject := inject(ctx, r, f, victim, 300*time.Millisecond, func() { hit.Store(true) })
	var mu sync.Mutex
	var calls []call
	var wg sync.WaitGroup
	hardStop := time.Now().Add(5 * time.Second)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stopAt time.Time
			for c := 0; ; c++ {
				if (!stopAt.IsZero() && time.Now().After(stopAt)) || time.Now().After(hardStop) {
					return
				}
				marker := fmt.Sprintf("p%d-g%d-%d", n, g, c)
				raw, err := a.request("tools/call", map[string]any{"name": "marker", "arguments": map[string]any{"path": path, "marker": marker}}, time.Second)
				cl := call{marker: marker, outcome: "unknown", detail: "no response"}
				if err != nil && strings.HasPrefix(err.Error(), "write") {
					// The request never reached the proxy (its stdin is gone): no call.
					return
				}
				if err != nil {
					cl.detail = err.Error()
				} else {
					var resp struct {
						Result struct {
							Structured map[string]any `json:"structuredContent"`
							Meta       map[string]any `json:"_meta"`
						} `json:"result"`
						Error any `json:"error"`
					}
					json.Unmarshal(raw, &resp)
					if o, ok := resp.Result.Meta["cua-host/outcome"].(string); ok {
						cl.outcome, cl.detail = o, "via proxy"
						if ref, ok := resp.Result.Structured["refusal"].(map[string]any); ok {
							cl.detail = fmt.Sprintf("via proxy: %v", ref["code"])
						}
					} else {
						cl.outcome, cl.detail = "", "response without outcome: "+string(raw)
					}
				}
				mu.Lock()
				calls = append(calls, cl)
				mu.Unlock()
				if stopAt.IsZero() && hit.Load() {
					stopAt = time.Now().Add(300 * time.Millisecond)
				}
				if cl.outcome != "completed" {
					time.Sleep(time.Duration(1+g) * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	waitInject()
	if target == "proxy" && f != faultStopCont {
		// The proxy is dead: its session channel's last copy is gone, and the worker
		// ends that session (the observer sees one session left).
		deadline := time.Now().Add(3 * time.Second)
		for {
			res, _ := observer.Call(ctx, "health_report", nil)
			var hr struct {
				Sessions int `json:"sessions"`
			}
			json.Unmarshal(res.Structured, &hr)
			if res.Outcome == host.Completed && hr.Sessions == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.violate("%s: the proxied session still counts on the worker 3s after the proxy died (%s)", round, res.Text())
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	inW.Close()
	px.Close()
	h.Close()
	t.checkMarkers(round, path, calls)
}
