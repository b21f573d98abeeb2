package main

// Known deviations: places where earlier workers differed from docs/protocol.md (or the
// API documentation it refers to). All three are fixed; the names stay so that a run with
// -strict=false against an older worker can still tell them apart from new violations.
// The model predicts the documented reaction and names the deviation; when the worker does
// exactly what the deviation describes, the step counts as a known deviation, and as a
// violation under -strict (the default). Each has a regression test in known_test.go.
const (
	// knownEOFBeforeHello: end-of-file before Hello ended the worker with exit status 1
	// (worker.Run returns the handshake's wrapped wire.ErrClosed, which worker.Main maps
	// to ExitError); docs/protocol.md says "any | end-of-file | revoke all, exit 0".
	knownEOFBeforeHello = "eof-before-hello-exit-1"
	// knownUnicodeLabel: a CreateSession label with Unicode whitespace, C1 control or
	// format characters (U+0085, U+00A0, U+2028, U+200B, U+202E …) was accepted; the
	// worker's validLabel refused only ASCII controls, space and DEL, while
	// host.SessionSpec documents "at most 128 printable bytes, no whitespace".
	knownUnicodeLabel = "label-unicode-space-or-control"
	// knownHugeErrorEcho: an Error reply quotes the offending value (RevokeSession's
	// unknown label, CreateSession's manifest_sha256) unbounded (now cut at 1 KiB); when the frame that
	// carried it was near the 1 MiB limit the reply exceeds the limit, wire refuses to
	// send it, and the worker drops it (logged at debug) — the documented Error never
	// arrives and a host's request waits until its context ends.
	knownHugeErrorEcho = "error-reply-echo-exceeds-frame-limit"
)
