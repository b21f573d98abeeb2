package atspi_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cua-host/cua-host/x11/atspi"
)

func snap(id string, window uint32, n int) *atspi.Snapshot {
	s := &atspi.Snapshot{ID: id, Window: atspi.Window{ID: window, PID: 42}}
	for i := range n {
		s.Elements = append(s.Elements, atspi.Element{Index: i, Token: atspi.Target{SnapshotID: id, Index: i}.Token(), Role: "push button"})
	}
	return s
}

func TestSnapshotsResolve(t *testing.T) {
	s := atspi.NewSnapshots(2)
	s.Add(snap("s00000001", 10, 3))
	s.Add(snap("s00000002", 20, 3))
	s.Add(snap("s00000003", 10, 2)) // supersedes s00000001
	tests := []struct {
		name string
		tok  atspi.Target
		want error
	}{
		{"latest", atspi.Target{SnapshotID: "s00000003", Index: 1}, nil},
		{"other window", atspi.Target{SnapshotID: "s00000002", Index: 2}, nil},
		{"superseded", atspi.Target{SnapshotID: "s00000001", Index: 0}, atspi.ErrStale},
		{"never taken", atspi.Target{SnapshotID: "s0000abcd", Index: 0}, atspi.ErrUnknownSnapshot},
		{"index past end", atspi.Target{SnapshotID: "s00000003", Index: 2}, atspi.ErrNoSuchElement},
		{"malformed id", atspi.Target{SnapshotID: "s3", Index: 0}, atspi.ErrInvalidToken},
		{"negative index", atspi.Target{SnapshotID: "s00000003", Index: -1}, atspi.ErrInvalidToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sn, el, err := s.Resolve(tc.tok)
			if tc.want == nil {
				if err != nil || sn.ID != tc.tok.SnapshotID || el.Index != tc.tok.Index {
					t.Fatalf("Resolve(%v) = %v, %v, %v", tc.tok, sn, el, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Resolve(%v) = %v, want %v", tc.tok, err, tc.want)
			}
		})
	}
	// A third window evicts the least recently used one (10 was resolved last, so 20 goes).
	s.Add(snap("s00000004", 30, 1))
	if _, _, err := s.Resolve(atspi.Target{SnapshotID: "s00000002", Index: 0}); !errors.Is(err, atspi.ErrUnknownSnapshot) {
		t.Errorf("evicted snapshot: Resolve = %v, want ErrUnknownSnapshot", err)
	}
	if _, _, err := s.Resolve(atspi.Target{SnapshotID: "s00000003", Index: 0}); err != nil {
		t.Errorf("recently used snapshot evicted: %v", err)
	}
	if got, ok := s.Latest(30); !ok || got.ID != "s00000004" {
		t.Errorf("Latest(30) = %v, %v", got, ok)
	}
}

func TestSnapshotsConcurrent(t *testing.T) {
	s := atspi.NewSnapshots(4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("s%04x%04x", g, i)
				s.Add(snap(id, uint32(g%5), 2))
				_, _, _ = s.Resolve(atspi.Target{SnapshotID: id, Index: 1})
			}
		}()
	}
	wg.Wait()
}
