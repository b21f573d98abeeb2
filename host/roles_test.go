package host

import "os"

// maybeRunRole runs helper roles of the re-executed test binary (see the tests that use
// them); it returns when the process was not started in a role.
func maybeRunRole() {
	switch os.Getenv("CUA_TEST_ROLE") {
	case "":
		return
	}
}
