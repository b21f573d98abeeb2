// Package journal is the host's tamper-evident record of what its sessions did: the
// on-disk format, the writer the trusted host appends with, and the verifier and reader
// that check and load a journal afterwards.
//
// A journal directory holds one segment per host instance (a subdirectory named by the
// segment id). A segment is a file of JSON lines, journal.jsonl, each line
// {"hash":…,"record":…}: hash is the SHA-256 of the record's exact bytes, and every record
// carries the hash of the one before it (prev), its sequence number, the segment id and,
// for session records, the session's identity. Screenshots are files under shots/ named by
// the SHA-256 of their contents, referenced from the records. Segments are chained: each
// segment's first record names the segment before it with its record count and last hash,
// and the first segment is number 1 (Chain), so a deleted, reordered or shortened segment
// shows in the one after it; the newest segments being deleted shows only against a head
// kept elsewhere (VerifyHead), which the writer logs when it closes its segment.
//
// It is not a transport: records reach the host over the control channel (package host);
// the worker and the proxy never hold a descriptor of a journal. It does not render
// reports (package report) and it does not replay anything.
package journal
