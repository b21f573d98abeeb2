package procfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want Stat
		ok   bool
	}{
		{name: "odd comm", line: "1234 (we ird) (name)) S 77 1200 1234 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10", want: Stat{PID: 1234, State: 'S', PPID: 77, PGID: 1200, StartTime: 987654}, ok: true},
		{name: "zombie", line: "1 (x) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", want: Stat{PID: 1, State: 'Z', PGID: 1, StartTime: 5}, ok: true},
		{name: "empty", line: ""},
		{name: "no fields", line: "1234 (x)"},
		{name: "short", line: "1234 (x) Z 1 2 3"},
		{name: "shorter", line: "1234 (x) S 1 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.line))
			if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
				t.Errorf("ParseStat(%q) = %+v, %v, want %+v", tc.line, got, err, tc.want)
			}
		})
	}
}

func TestSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil || st.PID != os.Getpid() || st.PPID != os.Getppid() || !st.Alive() || st.StartTime == 0 {
		t.Errorf("ReadStat(self) = %+v, %v", st, err)
	}
	if exe, err := Exe(os.Getpid()); err != nil || exe == "" {
		t.Errorf("Exe(self) = %q, %v", exe, err)
	}
	if Comm(os.Getpid()) == "" {
		t.Error("Comm(self) is empty")
	}
	if _, err := ReadStat(0); !os.IsNotExist(err) {
		t.Errorf("ReadStat(0) = %v, want not exist", err)
	}
}

// TestMapsLibrary: the test binary is mapped into its own process (found by a prefix of
// its name); a made-up library is not, and a process that does not exist maps nothing.
func TestMapsLibrary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(exe)
	if !MapsLibrary(os.Getpid(), base[:len(base)-1]) {
		t.Errorf("MapsLibrary(self, %q) = false, want true: the test binary is mapped", base[:len(base)-1])
	}
	if MapsLibrary(os.Getpid(), "libcua-host-no-such-library.so") {
		t.Error("MapsLibrary found a library that does not exist")
	}
	if MapsLibrary(-1, "lib") {
		t.Error("MapsLibrary of no process = true")
	}
}
