package x11

// Done returns a channel that is closed when the backend is closed, so that companions
// tied to this display (the AT-SPI client of worker/desktop) can end with it.
func (b *Backend) Done() <-chan struct{} { return b.done }
