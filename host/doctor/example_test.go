package doctor_test

import (
	"os"

	"github.com/cua-host/cua-host/host/doctor"
)

// A report as `cua-host doctor` prints it: one line per check, what a finding that is not
// ok means, the packages to install, and the verdict.
func ExampleReport_WriteText() {
	r := doctor.Report{
		Display: ":0", DisplaySource: "$DISPLAY", Shared: true, Missing: []string{"sandbox"},
		Checks: []doctor.Check{
			{ID: "x_server", Title: "X server", Status: doctor.OK, Required: true, Found: ":0 answers with the cookie from /home/alice/.Xauthority"},
			{ID: "sandbox", Title: "sandbox (bubblewrap)", Status: doctor.Missing, Required: true,
				Found: "bwrap is not installed", Meaning: "launch_app is refused", Install: []string{"bubblewrap"}},
			{ID: "xephyr", Title: "Xephyr", Status: doctor.Missing, Found: "not found on PATH", Install: []string{"xserver-xephyr"}},
		},
	}
	_ = r.WriteText(os.Stdout)
	// Output:
	// display :0 (from $DISPLAY, shared with a person)
	//
	// ok       X server             :0 answers with the cookie from /home/alice/.Xauthority
	// missing  sandbox (bubblewrap) bwrap is not installed
	//                               → launch_app is refused
	//                               install: apt install bubblewrap
	// missing  Xephyr               not found on PATH (the default run does not need it)
	//                               install: apt install xserver-xephyr
	//
	// not ready: missing sandbox (bubblewrap)
	// install: apt install bubblewrap
}
