package host

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeWatch reports the states a test puts on states; a closed channel ends the watch with
// an error, as a person's display that went away does.
type fakeWatch struct {
	states chan bool
}

func (f *fakeWatch) WatchPerson(ctx context.Context, report func(bool)) error {
	for {
		select {
		case a, ok := <-f.states:
			if !ok {
				return errors.New("the person's display went away")
			}
			report(a)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// workerMessages returns the messages of the records whose text contains sub, in order.
func (h *recordingHandler) messages(sub string) []string {
	h.mu <- struct{}{}
	defer func() { <-h.mu }()
	var out []string
	for _, r := range h.recs {
		if strings.Contains(r.Message, sub) {
			out = append(out, r.Message)
		}
	}
	return out
}

// TestPersonActivityReachesTheWorker: Start returns once the watcher's first state reached
// the worker; each change follows, a repeated state is not sent again, and a watch that
// ends on its own leaves the person reported active (fail closed).
func TestPersonActivityReachesTheWorker(t *testing.T) {
	rh := &recordingHandler{mu: make(chan struct{}, 1)}
	w := &fakeWatch{states: make(chan bool, 4)}
	w.states <- true
	h, err := Start(t.Context(), Options{Logger: slog.New(rh), WorkerLogLevel: slog.LevelDebug, Display: DisplayFacts{Nested: true, Private: true}, Person: w})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if a, known := h.PersonActive(); !a || !known {
		t.Fatalf("PersonActive() after Start = %v, %v, want true, true", a, known)
	}
	sync := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if a, _ := h.PersonActive(); a == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("PersonActive() never became %v", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := h.Status(t.Context()); err != nil { // the worker read every frame before
			t.Fatal(err)
		}
	}
	w.states <- true // a repeat: nothing sent
	w.states <- false
	sync(false)
	close(w.states) // the watch fails: active again, for good
	sync(true)
	h.Close() // drains the worker's logs
	got := rh.messages("nested display")
	want := []string{
		"the person is using the nested display: acting calls are refused person_active",
		"the person left the nested display: acting calls run again",
		"the person is using the nested display: acting calls are refused person_active",
	}
	if !slices.Equal(got, want) {
		t.Errorf("worker logged %q, want %q", got, want)
	}
	if warn := rh.messages("cannot watch the person's display"); len(warn) != 1 {
		t.Errorf("host warnings about the watch = %q, want one", warn)
	}
}

// TestPersonWatchThatFailsStopsStart: a watch that cannot report a first state fails
// Start, which leaves no worker behind.
func TestPersonWatchThatFailsStopsStart(t *testing.T) {
	tests := []struct {
		name  string
		watch PersonWatcher
		want  string
	}{
		{name: "ends at once", watch: &fakeWatch{states: closedStates()}, want: "went away"},
		{name: "never reports", watch: &fakeWatch{states: make(chan bool)}, want: "no first state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(t.Context(), Options{Logger: testLogger(t), Display: DisplayFacts{Nested: true, Private: true}, Person: tt.watch, StartTimeout: 2 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start = %v, want an error saying %q", err, tt.want)
			}
			if kids := children(t); len(kids) > 0 {
				t.Errorf("children left behind: %v", kids)
			}
		})
	}
}

func closedStates() chan bool {
	c := make(chan bool)
	close(c)
	return c
}
