package personui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// InputKind says which input devices can answer the windows on a display.
type InputKind int

// Input kinds.
const (
	// InputPhysical: the server has input devices of its own (a mouse, a keyboard, a VNC
	// server's devices): only they answer; XTEST input never does.
	InputPhysical InputKind = iota + 1
	// InputXTestOnly: the server has no input device but XTEST's (Xvfb, a VNC server that
	// injects the person's input through XTEST), so the windows cannot tell the person from
	// a program that uses XTEST: XTEST input answers, except through a session's own
	// devices.
	InputXTestOnly
)

// String returns physical or xtest_only.
func (k InputKind) String() string {
	switch k {
	case InputPhysical:
		return "physical"
	case InputXTestOnly:
		return "xtest_only"
	}
	return fmt.Sprintf("input(%d)", int(k))
}

// InputDevice is one input device of the server.
type InputDevice struct {
	ID   uint16
	Name string
	// Keyboard is true for a keyboard, false for a pointer.
	Keyboard bool
	// Floating is true for a slave attached to no master.
	Floating bool
}

// InputFacts describe who can answer the windows on a display.
type InputFacts struct {
	Kind InputKind
	// Pointers and Keyboards are the physical slave devices (neither XTEST devices nor
	// masters nor the inert devices of a virtual server).
	Pointers, Keyboards []InputDevice
}

// Summary is a one-line description of f for a person.
func (f InputFacts) Summary() string {
	if f.Kind == InputXTestOnly {
		return "the display has no physical input devices (only XTEST: Xvfb, or a VNC server injecting input): " +
			"any program on the display can answer the consent dialog and press Stop as if it were the person; " +
			"only the sessions' own input devices are refused"
	}
	names := func(ds []InputDevice) string {
		var n []string
		for _, d := range ds {
			n = append(n, fmt.Sprintf("%q", d.Name))
		}
		return strings.Join(n, ", ")
	}
	return fmt.Sprintf("the consent dialog and Stop answer only to physical input devices (pointers %s; keyboards %s)",
		names(f.Pointers), names(f.Keyboards))
}

// ProbeInput reports which input devices can answer the windows on the display opts name.
func ProbeInput(ctx context.Context, opts Options) (InputFacts, error) {
	c, err := dial(ctx, opts)
	if err != nil {
		return InputFacts{}, err
	}
	defer c.x.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.nc.Close() })
	defer stop()
	if err := xinput2.Init(c.x); err != nil {
		return InputFacts{}, fmt.Errorf("%w: %w", ErrDisplay, err)
	}
	t, err := loadInputs(c, opts.physicalForTest)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return InputFacts{}, fmt.Errorf("%w: list input devices: %w", ErrDisplay, err)
	}
	return t.facts(), nil
}

// inertDevices are slave devices that exist on a server but never carry input: Xvfb's own
// pointer and keyboard. No client can create a slave device of either name (a master pair
// "Xvfb" would be called "Xvfb pointer" and "Xvfb keyboard", masters both, with XTEST
// slaves).
var inertDevices = []string{"Xvfb mouse", "Xvfb keyboard"}

// inputDevice is one device as the input rule sees it.
type inputDevice struct {
	xinput2.Device
	// xtest: an XTEST slave (the server's property, or the name the server gives them).
	// physical: a slave that is not XTEST's and not inert, or one the test seam picked.
	xtest, physical bool
}

// inputTable is the server's input devices and the rule that decides whose presses count.
// It is read when a window is created and again after each change of the device hierarchy.
type inputTable struct {
	devs map[uint16]inputDevice
	// seats are the master devices of cua-host sessions (xinput2.SeatName), both of each
	// pair.
	seats map[uint16]bool
	kind  InputKind
}

// loadInputs reads the server's devices and the XTEST property of each slave. XInput2 must
// have been initialised on c. A device removed between the two reads fails the second;
// it tries again, three times at most.
func loadInputs(c *conn, physicalForTest func(string) bool) (t *inputTable, err error) {
	for range 3 {
		if t, err = readInputs(c, physicalForTest); err == nil {
			return t, nil
		}
	}
	return nil, err
}

func readInputs(c *conn, physicalForTest func(string) bool) (*inputTable, error) {
	devs, err := xinput2.Devices(c.x)
	if err != nil {
		return nil, err
	}
	var slaves []uint16
	for _, d := range devs {
		if !isMaster(d) {
			slaves = append(slaves, d.ID)
		}
	}
	atomCk := xproto.InternAtom(c.x, true, uint16(len(xinput2.XTestDeviceProperty)), xinput2.XTestDeviceProperty)
	props, err := xinput2.Properties(c.x, slaves)
	if err != nil {
		return nil, err
	}
	ar, err := atomCk.Reply()
	if err != nil {
		return nil, err
	}
	xtest := map[uint16]bool{}
	for i, id := range slaves {
		xtest[id] = ar.Atom != 0 && slices.Contains(props[i], ar.Atom)
	}
	return classify(devs, xtest, physicalForTest), nil
}

func isMaster(d xinput2.Device) bool {
	return d.Use == xinput2.MasterPointer || d.Use == xinput2.MasterKeyboard
}

// classify builds the table from the device list and which slaves carry the XTEST property.
// The display is InputPhysical when any slave — attached, floating or disabled — is
// physical: a program can float or disable a device but not remove it, so it cannot turn
// a display with a mouse into one that accepts XTEST.
func classify(devs []xinput2.Device, xtest map[uint16]bool, physicalForTest func(string) bool) *inputTable {
	t := &inputTable{devs: map[uint16]inputDevice{}, seats: map[uint16]bool{}, kind: InputXTestOnly}
	for _, d := range devs {
		in := inputDevice{Device: d}
		if d.Use == xinput2.MasterPointer {
			if _, _, ok := xinput2.ParseSeatPointer(d.Name); ok {
				t.seats[d.ID] = true
				t.seats[d.Attachment] = true
			}
		}
		if !isMaster(d) {
			in.xtest = xtest[d.ID] || strings.HasSuffix(d.Name, " XTEST pointer") || strings.HasSuffix(d.Name, " XTEST keyboard")
			in.physical = !in.xtest && !slices.Contains(inertDevices, d.Name)
			if physicalForTest != nil && physicalForTest(d.Name) {
				in.physical = true
			}
			if in.physical {
				t.kind = InputPhysical
			}
		}
		t.devs[d.ID] = in
	}
	return t
}

// facts describes the table for ProbeInput.
func (t *inputTable) facts() InputFacts {
	f := InputFacts{Kind: t.kind}
	ids := make([]uint16, 0, len(t.devs))
	for id := range t.devs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		d := t.devs[id]
		if !d.physical {
			continue
		}
		kbd := d.Use == xinput2.SlaveKeyboard
		if d.Use == xinput2.FloatingSlave {
			// A floating slave is attached to nothing; its name tells which kind it is.
			kbd = strings.Contains(strings.ToLower(d.Name), "keyboard")
		}
		dev := InputDevice{ID: d.ID, Name: d.Name, Keyboard: kbd, Floating: d.Use == xinput2.FloatingSlave}
		if kbd {
			f.Keyboards = append(f.Keyboards, dev)
		} else {
			f.Pointers = append(f.Pointers, dev)
		}
	}
	return f
}

// accept decides whether an XI2 event of master device dev from slave src answers: never
// through a session's own master devices (nor from a slave attached to one); on a display
// with physical devices only from one of them; on an XTEST-only display from any other
// slave. known is false when src is not in the table (the caller reads it again and asks
// once more).
func (t *inputTable) accept(dev, src uint16) (ok, known bool, why string) {
	if t.seats[dev] {
		return false, true, "a session's own input device"
	}
	s, found := t.devs[src]
	if !found {
		return false, false, "an unknown source device"
	}
	switch {
	case isMaster(s.Device):
		return false, true, "a master device as the source"
	case t.seats[s.Attachment]:
		return false, true, "a device attached to a session's own master"
	case t.kind == InputPhysical && !s.physical:
		return false, true, fmt.Sprintf("not a physical device (%q)", s.Name)
	}
	return true, true, ""
}
