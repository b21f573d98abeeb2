// Command fakeatspi is an accessible application made only of D-Bus objects on the
// accessibility bus ($AT_SPI_BUS_ADDRESS), for tests of what no toolkit builds on
// purpose: a child that is its own ancestor, a child that belongs to another
// application, a table that reports 2^30 children, a chain deeper than any bound, and
// (with -hang) an object that never answers. It registers with the registry like a
// toolkit does (Socket.Embed), prints "ready" on stdout, then one line per call worth
// checking ("GetChildren big", "DoAction button 0"), and runs until killed.
//
// Its tree, under /org/a11y/atspi/accessible/:
//
//	root: application "fake"
//	  frame: frame "Fake" at -x,-y -w×-h
//	    cycle: panel "loop", whose child is frame again
//	    (the registry's root object: another application's)
//	    big: table, 2^30 children "cell/N": table cell "cell N" (the first 5 showing)
//	    deep/0 … deep/N: unnamed fillers, one inside the other; deep/N is push button "bottom"
//	    button: push button "Press me" (action click)
//	    hang: label "stuck", whose GetState never answers (with -hang)
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/godbus/dbus/v5"
)

const base = "/org/a11y/atspi/accessible/"

var (
	x     = flag.Int("x", 100, "frame x")
	y     = flag.Int("y", 100, "frame y")
	w     = flag.Int("w", 300, "frame width")
	h     = flag.Int("h", 200, "frame height")
	depth = flag.Int("depth", 60, "length of the deep chain")
	hang  = flag.Bool("hang", false, "the hang object never answers GetState")
)

// AT-SPI states (AtspiStateType bits).
const (
	enabled             = 1 << 8
	sensitive           = 1 << 24
	showing             = 1 << 25
	visible             = 1 << 30
	managesDescendants  = 1 << 31
	shown               = enabled | sensitive | showing | visible
	ifaceAccessible     = "org.a11y.atspi.Accessible"
	ifaceComponent      = "org.a11y.atspi.Component"
	ifaceAction         = "org.a11y.atspi.Action"
	bigChildren         = 1 << 30
	showingCells        = 5
	cellHeight          = 20
	registryBus         = "org.a11y.atspi.Registry"
	registryRootPath    = "/org/a11y/atspi/accessible/root"
	propertiesInterface = "org.freedesktop.DBus.Properties"
)

type ref struct {
	Bus  string
	Path dbus.ObjectPath
}

type obj struct {
	role, name string
	states     uint64
	component  bool
	actions    []string
	ext        [4]int32
	kids       []ref
	count      int32 // ChildCount when kids is nil
	parent     ref
}

type app struct {
	conn *dbus.Conn
	me   string
}

func (a *app) ref(name string) ref { return ref{a.me, dbus.ObjectPath(base + name)} }

// lookup builds the object at path.
func (a *app) lookup(path dbus.ObjectPath) (*obj, bool) {
	name := strings.TrimPrefix(string(path), base)
	fx, fy := int32(*x), int32(*y)
	switch {
	case name == "root":
		return &obj{role: "application", name: "fake", kids: []ref{a.ref("frame")}, parent: ref{registryBus, registryRootPath}}, true
	case name == "frame":
		kids := []ref{a.ref("cycle"), {registryBus, registryRootPath}, a.ref("big"), a.ref("deep/0"), a.ref("button")}
		if *hang {
			kids = append(kids, a.ref("hang"))
		}
		return &obj{role: "frame", name: "Fake", states: shown | 1<<1, component: true, ext: [4]int32{fx, fy, int32(*w), int32(*h)}, kids: kids, parent: a.ref("root")}, true
	case name == "cycle":
		return &obj{role: "panel", name: "loop", states: shown, component: true, ext: [4]int32{fx, fy, 10, 10}, kids: []ref{a.ref("frame")}, parent: a.ref("frame")}, true
	case name == "big":
		return &obj{role: "table", states: shown | managesDescendants, component: true, ext: [4]int32{fx, fy + 20, 200, showingCells * cellHeight}, count: bigChildren, parent: a.ref("frame")}, true
	case strings.HasPrefix(name, "cell/"):
		i, err := strconv.Atoi(strings.TrimPrefix(name, "cell/"))
		if err != nil || i < 0 || i >= bigChildren {
			return nil, false
		}
		o := &obj{role: "table cell", name: "cell " + strconv.Itoa(i), states: enabled | sensitive | visible, component: true,
			ext: [4]int32{-1 << 31, -1 << 31, 200, cellHeight}, actions: []string{"click"}, parent: a.ref("big"), kids: []ref{}}
		if i < showingCells {
			o.states |= showing
			o.ext = [4]int32{fx, fy + 20 + int32(i)*cellHeight, 200, cellHeight}
		}
		return o, true
	case strings.HasPrefix(name, "deep/"):
		i, err := strconv.Atoi(strings.TrimPrefix(name, "deep/"))
		if err != nil || i < 0 || i > *depth {
			return nil, false
		}
		parent := a.ref("frame")
		if i > 0 {
			parent = a.ref("deep/" + strconv.Itoa(i-1))
		}
		if i == *depth {
			return &obj{role: "push button", name: "bottom", states: shown, component: true, ext: [4]int32{fx, fy, 10, 10}, actions: []string{"click"}, parent: parent, kids: []ref{}}, true
		}
		return &obj{role: "filler", states: shown, component: true, ext: [4]int32{fx, fy, 10, 10}, kids: []ref{a.ref("deep/" + strconv.Itoa(i+1))}, parent: parent}, true
	case name == "button":
		return &obj{role: "push button", name: "Press me", states: shown, component: true, ext: [4]int32{fx + 10, fy + int32(*h) - 40, 80, 30}, actions: []string{"click"}, parent: a.ref("frame"), kids: []ref{}}, true
	case name == "hang" && *hang:
		return &obj{role: "label", name: "stuck", states: shown, parent: a.ref("frame"), kids: []ref{}}, true
	}
	return nil, false
}

func (o *obj) childCount() int32 {
	if o.kids != nil {
		return int32(len(o.kids))
	}
	return o.count
}

func (o *obj) ifaces() []string {
	out := []string{ifaceAccessible}
	if o.component {
		out = append(out, ifaceComponent)
	}
	if len(o.actions) > 0 {
		out = append(out, ifaceAction)
	}
	return out
}

// with adapts a getter of one object to a method of the exported subtree.
func with[T any](a *app, f func(o *obj) T) func(dbus.Message) (T, *dbus.Error) {
	return func(m dbus.Message) (T, *dbus.Error) {
		path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
		o, ok := a.lookup(path)
		if !ok {
			var zero T
			return zero, unknown
		}
		return f(o), nil
	}
}

var unknown = dbus.NewError("org.freedesktop.DBus.Error.UnknownObject", []any{"no such object"})

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeatspi:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := os.Getenv("AT_SPI_BUS_ADDRESS")
	if addr == "" {
		return fmt.Errorf("AT_SPI_BUS_ADDRESS is not set")
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	a := &app{conn: conn, me: conn.Names()[0]}
	accessible := map[string]any{
		"GetRoleName":   with(a, func(o *obj) string { return o.role }),
		"GetInterfaces": with(a, func(o *obj) []string { return o.ifaces() }),
		"GetState": func(m dbus.Message) ([]uint32, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok {
				return nil, unknown
			}
			if o.name == "stuck" {
				select {} // never answers
			}
			return []uint32{uint32(o.states), uint32(o.states >> 32)}, nil
		},
		"GetChildren": func(m dbus.Message) ([]ref, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok {
				return nil, unknown
			}
			if o.kids == nil {
				fmt.Println("GetChildren", strings.TrimPrefix(string(path), base))
				return nil, dbus.NewError("org.freedesktop.DBus.Error.LimitsExceeded", []any{"too many children"})
			}
			return o.kids, nil
		},
		"GetChildAtIndex": func(m dbus.Message, i int32) (ref, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok || i < 0 || i >= o.childCount() {
				return ref{}, unknown
			}
			if o.kids != nil {
				return o.kids[i], nil
			}
			return a.ref("cell/" + strconv.Itoa(int(i))), nil
		},
		"GetIndexInParent": with(a, func(o *obj) int32 { return 0 }),
	}
	props := map[string]any{
		"GetAll": func(m dbus.Message, iface string) (map[string]dbus.Variant, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok {
				return nil, unknown
			}
			if iface != ifaceAccessible {
				return map[string]dbus.Variant{}, nil
			}
			return map[string]dbus.Variant{"Name": dbus.MakeVariant(o.name), "Description": dbus.MakeVariant(""),
				"ChildCount": dbus.MakeVariant(o.childCount()), "Parent": dbus.MakeVariant(o.parent)}, nil
		},
		"Get": func(m dbus.Message, iface, prop string) (dbus.Variant, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok {
				return dbus.Variant{}, unknown
			}
			switch prop {
			case "Name":
				return dbus.MakeVariant(o.name), nil
			case "ChildCount":
				return dbus.MakeVariant(o.childCount()), nil
			case "Parent":
				return dbus.MakeVariant(o.parent), nil
			}
			return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{"no such property"})
		},
	}
	component := map[string]any{
		"GetExtents": func(m dbus.Message, coords uint32) (struct{ X, Y, W, H int32 }, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok || !o.component {
				return struct{ X, Y, W, H int32 }{}, unknown
			}
			return struct{ X, Y, W, H int32 }{o.ext[0], o.ext[1], o.ext[2], o.ext[3]}, nil
		},
	}
	action := map[string]any{
		"GetActions": func(m dbus.Message) ([]struct{ N, D, K string }, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok {
				return nil, unknown
			}
			var out []struct{ N, D, K string }
			for _, n := range o.actions {
				out = append(out, struct{ N, D, K string }{strings.ToUpper(n[:1]) + n[1:], "", ""})
			}
			return out, nil
		},
		"GetName": func(m dbus.Message, i int32) (string, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok || i < 0 || int(i) >= len(o.actions) {
				return "", unknown
			}
			return o.actions[i], nil
		},
		"DoAction": func(m dbus.Message, i int32) (bool, *dbus.Error) {
			path, _ := m.Headers[dbus.FieldPath].Value().(dbus.ObjectPath)
			o, ok := a.lookup(path)
			if !ok || i < 0 || int(i) >= len(o.actions) {
				return false, unknown
			}
			fmt.Println("DoAction", strings.TrimPrefix(string(path), base), i)
			return true, nil
		},
	}
	for iface, table := range map[string]map[string]any{ifaceAccessible: accessible, propertiesInterface: props, ifaceComponent: component, ifaceAction: action} {
		if err := conn.ExportSubtreeMethodTable(table, dbus.ObjectPath(strings.TrimSuffix(base, "/")), iface); err != nil {
			return fmt.Errorf("export %s: %w", iface, err)
		}
	}
	var desktop ref
	if err := conn.Object(registryBus, registryRootPath).Call("org.a11y.atspi.Socket.Embed", 0, a.ref("root")).Store(&desktop); err != nil {
		return fmt.Errorf("register with the registry: %w", err)
	}
	fmt.Println("ready")
	select {}
}
