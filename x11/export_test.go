package x11

// WindowDescriptionReads is how many window descriptions b has read from the server.
func WindowDescriptionReads(b *Backend) uint64 { return b.windows.reads.Load() }
