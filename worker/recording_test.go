package worker

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
)

func refusalCode(r *authz.Refusal) authz.Code {
	if r == nil {
		return ""
	}
	return r.Code
}

// TestRecordingStateMachine walks a session's recordings through every way one stops.
func TestRecordingStateMachine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	t.Run("stop without start", func(t *testing.T) {
		var r recordingState
		if _, ref := r.stop(t0); refusalCode(ref) != authz.CodeRecordingInactive {
			t.Fatalf("stop() = %v, want %s", ref, authz.CodeRecordingInactive)
		}
		if _, running, ok := r.snapshot(t0); running || ok {
			t.Fatalf("snapshot() = running %v, ok %v; want neither", running, ok)
		}
	})

	t.Run("start twice, then stop", func(t *testing.T) {
		var r recordingState
		sp, ref := r.start("", 0, 0, t0)
		if ref != nil || sp.name != "recording-1" {
			t.Fatalf("start() = %+v, %v; want recording-1", sp, ref)
		}
		if _, ref := r.start("other", 0, 0, at(1)); refusalCode(ref) != authz.CodeRecordingActive {
			t.Fatalf("second start() = %v, want %s", ref, authz.CodeRecordingActive)
		}
		if tag := r.enter("click", true, at(2)); tag == nil || tag.Name != "recording-1" || tag.Turn != 1 {
			t.Fatalf("enter(click) = %+v, want turn 1 of recording-1", tag)
		}
		if tag := r.enter("list_windows", false, at(3)); tag == nil || tag.Turn != 0 {
			t.Fatalf("enter(list_windows) = %+v, want inside the span without a turn", tag)
		}
		for _, name := range []string{"start_recording", "stop_recording", "get_recording_state"} {
			if tag := r.enter(name, false, at(3)); tag != nil {
				t.Errorf("enter(%s) = %+v, want nil: the recording tools are never inside a span", name, tag)
			}
		}
		sp, ref = r.stop(at(10))
		if ref != nil || sp.reason != stopStopped || sp.turns != 1 || sp.stopped != at(10) {
			t.Fatalf("stop() = %+v, %v; want stopped after 1 turn at +10ms", sp, ref)
		}
		if tag := r.enter("click", true, at(11)); tag != nil {
			t.Fatalf("enter after stop = %+v, want nil", tag)
		}
		if _, ref := r.stop(at(12)); refusalCode(ref) != authz.CodeRecordingInactive {
			t.Fatalf("stop() after stop = %v, want %s", ref, authz.CodeRecordingInactive)
		}
		// A new recording starts over, with the next default name.
		sp, ref = r.start("", 0, 0, at(20))
		if ref != nil || sp.name != "recording-2" || sp.turns != 0 {
			t.Fatalf("restart = %+v, %v; want recording-2 with no turns", sp, ref)
		}
	})

	t.Run("max_turns", func(t *testing.T) {
		var r recordingState
		if _, ref := r.start("two", 2, 0, t0); ref != nil {
			t.Fatal(ref)
		}
		t1 := r.enter("click", true, at(1))
		t2 := r.enter("press_key", true, at(2))
		t3 := r.enter("click", true, at(3))
		if t1 == nil || t1.Turn != 1 || t1.StopReason != "" {
			t.Errorf("turn 1 = %+v", t1)
		}
		if t2 == nil || t2.Turn != 2 || t2.StopReason != "max_turns" {
			t.Errorf("turn 2 = %+v, want turn 2 with stop_reason max_turns", t2)
		}
		if t3 != nil {
			t.Errorf("a third action = %+v, want outside the span", t3)
		}
		sp, running, ok := r.snapshot(at(4))
		if running || !ok || sp.reason != stopMaxTurns || sp.turns != 2 || sp.stopped != at(2) {
			t.Fatalf("snapshot = %+v running %v; want stopped by max_turns after 2 at +2ms", sp, running)
		}
		if _, ref := r.stop(at(5)); refusalCode(ref) != authz.CodeRecordingInactive {
			t.Fatalf("stop() after max_turns = %v, want %s", ref, authz.CodeRecordingInactive)
		}
	})

	t.Run("max_duration", func(t *testing.T) {
		var r recordingState
		if _, ref := r.start("short", 0, 50*time.Millisecond, t0); ref != nil {
			t.Fatal(ref)
		}
		if tag := r.enter("click", true, at(49)); tag == nil || tag.Turn != 1 {
			t.Fatalf("enter before the end = %+v, want turn 1", tag)
		}
		if tag := r.enter("click", true, at(50)); tag != nil {
			t.Fatalf("enter at the end = %+v, want outside the span", tag)
		}
		sp, running, _ := r.snapshot(at(60))
		if running || sp.reason != stopMaxDuration || sp.stopped != at(50) || sp.turns != 1 {
			t.Fatalf("snapshot = %+v running %v; want stopped by max_duration at +50ms", sp, running)
		}
	})

	t.Run("session ended", func(t *testing.T) {
		var r recordingState
		if _, ref := r.start("s", 0, 0, t0); ref != nil {
			t.Fatal(ref)
		}
		r.sessionEnded(at(7))
		sp, running, _ := r.snapshot(at(8))
		if running || sp.reason != stopSessionEnded || sp.stopped != at(7) {
			t.Fatalf("snapshot = %+v running %v; want stopped by session_ended at +7ms", sp, running)
		}
		if _, ref := r.start("again", 0, 0, at(9)); ref == nil {
			t.Fatal("start() after the session ended succeeded")
		}
		// A span a budget stopped keeps its reason when the session ends after.
		var q recordingState
		q.start("q", 1, 0, t0)
		q.enter("click", true, at(1))
		q.sessionEnded(at(2))
		if sp, _, _ := q.snapshot(at(3)); sp.reason != stopMaxTurns {
			t.Fatalf("reason = %s, want max_turns", sp.reason)
		}
	})
}

// TestRecordingTurnsUnderConcurrency: actions entering at once never exceed max_turns, and
// their turns are 1…max_turns, each once.
func TestRecordingTurnsUnderConcurrency(t *testing.T) {
	var r recordingState
	now := time.Now()
	if _, ref := r.start("c", 10, 0, now); ref != nil {
		t.Fatal(ref)
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if tag := r.enter("click", true, now); tag != nil {
				mu.Lock()
				seen[tag.Turn]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 10 {
		t.Fatalf("%d distinct turns, want 10: %v", len(seen), seen)
	}
	for turn := 1; turn <= 10; turn++ {
		if seen[turn] != 1 {
			t.Errorf("turn %d given %d times, want once", turn, seen[turn])
		}
	}
}

// TestResultFactsCarryTheRecording: the tag joins a result's facts, and stands alone when
// the result is not an object the facts can be read from.
func TestResultFactsCarryTheRecording(t *testing.T) {
	tag := &recordingTag{Name: "r", Turn: 2, StopReason: "max_turns"}
	for _, c := range []struct {
		name       string
		structured string
		want       string
	}{
		{"action", `{"route":"xtest","recording":true}`, `{"route":"xtest","recording":{"name":"r","turn":2,"stop_reason":"max_turns"}}`},
		{"not an object", `[1]`, `{"recording":{"name":"r","turn":2,"stop_reason":"max_turns"}}`},
		{"nothing", ``, `{"recording":{"name":"r","turn":2,"stop_reason":"max_turns"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := resultFacts([]byte(c.structured), nil, tag)
			var a, b any
			if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(c.want), &b) != nil {
				t.Fatalf("resultFacts = %s, want %s", got, c.want)
			}
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Fatalf("resultFacts = %s, want %s", got, c.want)
			}
		})
	}
	if got := resultFacts([]byte(`{"route":"xtest"}`), nil, nil); string(got) != `{"route":"xtest"}` {
		t.Errorf("resultFacts without a recording = %s", got)
	}
}
