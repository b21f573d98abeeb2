package contract

import (
	"strings"
	"testing"
)

// FuzzParseFlags: the worker's and the proxy's flag parsers take any words without
// panicking, and what they accept, written back with Args, parses to the same flags
// (levels compared by the name Args writes).
func FuzzParseFlags(f *testing.F) {
	for _, seed := range []string{
		"--log-level\x00debug",
		"--log-level\x00warn\x00--hello-timeout\x002s",
		"--http\x00127.0.0.1:0\x00--call-timeout\x001m",
		"--endpoint\x00--endpoint-http\x00--idle-exit\x0030s",
		"--log-level=INFO+2",
		"--hello-timeout\x00-1s",
		"--endpoint-http",
		"stray",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, words string) {
		args := strings.Split(words, "\x00")
		if w, err := ParseWorkerFlags(args); err == nil {
			again, err := ParseWorkerFlags(w.Args())
			if err != nil {
				t.Fatalf("ParseWorkerFlags(%q) = %+v, whose Args %q do not parse: %v", args, w, w.Args(), err)
			}
			if LevelName(again.LogLevel) != LevelName(w.LogLevel) || again.HelloTimeout != w.HelloTimeout {
				t.Fatalf("worker flags %+v written as %q read back as %+v", w, w.Args(), again)
			}
		}
		if p, err := ParseProxyFlags(args); err == nil {
			again, err := ParseProxyFlags(p.Args())
			if err != nil {
				t.Fatalf("ParseProxyFlags(%q) = %+v, whose Args %q do not parse: %v", args, p, p.Args(), err)
			}
			if LevelName(again.LogLevel) != LevelName(p.LogLevel) {
				t.Fatalf("proxy flags %+v written as %q read back at level %v", p, p.Args(), again.LogLevel)
			}
			p.LogLevel, again.LogLevel = 0, 0
			if again != p {
				t.Fatalf("proxy flags %+v written as %q read back as %+v", p, p.Args(), again)
			}
		}
	})
}
