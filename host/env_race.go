//go:build race

package host

// Race-detector builds (tests only) let GORACE through, so a test can turn off the
// detector's one-second sleep at exit (atexit_sleep_ms) in the workers it spawns.
func init() { envAllowlist["GORACE"] = true }
