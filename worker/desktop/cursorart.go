package desktop

import (
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/cua-host/cua-host/x11"
)

// Agent cursor themes: cua-host's own, installed with it, selected by id
// (set_agent_cursor_theme). Each is still two-colour artwork: it has no animation per
// action, so every action resolves to the theme's one picture ("idle").

// themeProfile names what a theme provides: still artwork, no per-action animation.
const themeProfile = "cua-host.static-v1"

// cursorTheme is one installed theme.
type cursorTheme struct {
	id, version string
	// art draws the cursor at scale 1: '#' outline, 'o' fill, anything else clear.
	art        []string
	hotX, hotY int
	scale      int
	// fill is the fill colour, 0xRRGGBB; sessionFill replaces it with the session's colour.
	fill        uint32
	sessionFill bool
	outline     uint32
}

// defaultTheme is the reference driver's built-in theme id, which cua-host draws its own
// way: an arrow in the session's colour with a white outline.
const defaultTheme = "cua.default"

// arrow is a pointer arrow, tip at (0,0).
var arrow = []string{
	"#...........",
	"##..........",
	"#o#.........",
	"#oo#........",
	"#ooo#.......",
	"#oooo#......",
	"#ooooo#.....",
	"#oooooo#....",
	"#ooooooo#...",
	"#oooooooo#..",
	"#ooooooooo#.",
	"#oooooo#####",
	"#ooo#oo#....",
	"#oo#.#oo#...",
	"#o#..#oo#...",
	"##....#oo#..",
	"#.....#oo#..",
	".......#oo#.",
	".......####.",
}

// ring is a ring around the pointer's position, at its centre.
var ring = ringArt(12, 7, 10)

// ringArt draws a ring of fill between radii inner and outer, with a one-pixel outline,
// centred in a square of side 2·c+1.
func ringArt(c int, inner, outer float64) []string {
	rows := make([]string, 2*c+1)
	for y := range rows {
		var sb strings.Builder
		for x := 0; x <= 2*c; x++ {
			r := math.Hypot(float64(x-c), float64(y-c))
			switch {
			case r >= inner && r <= outer:
				sb.WriteByte('o')
			case r >= inner-1 && r <= outer+1:
				sb.WriteByte('#')
			default:
				sb.WriteByte('.')
			}
		}
		rows[y] = sb.String()
	}
	return rows
}

// themes are the installed themes, default first.
var themes = []cursorTheme{
	{id: defaultTheme, version: "1.0.0", art: arrow, scale: 2, sessionFill: true, outline: 0xffffff},
	{id: "cua-host.contrast", version: "1.0.0", art: arrow, scale: 2, fill: 0xffd400, outline: 0x000000},
	{id: "cua-host.ring", version: "1.0.0", art: ring, hotX: 12, hotY: 12, scale: 1, sessionFill: true, outline: 0xffffff},
}

// themeIDs lists the installed themes' ids, for messages.
func themeIDs() string {
	ids := make([]string, len(themes))
	for i, t := range themes {
		ids[i] = t.id
	}
	return strings.Join(ids, ", ")
}

// themeByID returns the installed theme id.
func themeByID(id string) (cursorTheme, bool) {
	i := slices.IndexFunc(themes, func(t cursorTheme) bool { return t.id == id })
	if i < 0 {
		return cursorTheme{}, false
	}
	return themes[i], true
}

// sessionPalette gives named sessions distinct, stable colours; the first is for a session
// without a label.
var sessionPalette = []uint32{0x2f6bff, 0xf28c28, 0x2ba84a, 0x8e44d8, 0x1aa6b7, 0xe0413a, 0xd9468f, 0x8a9a1b}

// sessionColor is label's colour: the same label always gets the same one.
func sessionColor(label string) uint32 {
	if label == "" {
		return sessionPalette[0]
	}
	h := fnv.New32a()
	h.Write([]byte(label))
	return sessionPalette[h.Sum32()%uint32(len(sessionPalette))]
}

// image renders t for the session labelled label.
func (t cursorTheme) image(label string) x11.CursorImage {
	s := max(t.scale, 1)
	w := 0
	for _, row := range t.art {
		w = max(w, len(row))
	}
	img := x11.CursorImage{Width: w * s, Height: len(t.art) * s, HotX: t.hotX * s, HotY: t.hotY * s, Fill: t.fill, Outline: t.outline}
	if t.sessionFill {
		img.Fill = sessionColor(label)
	}
	img.Pixels = make([]byte, img.Width*img.Height)
	for y, row := range t.art {
		for x := range len(row) {
			v := x11.CursorClear
			switch row[x] {
			case '#':
				v = x11.CursorOutline
			case 'o':
				v = x11.CursorFill
			}
			for dy := range s {
				for dx := range s {
					img.Pixels[(y*s+dy)*img.Width+x*s+dx] = v
				}
			}
		}
	}
	return img
}

// cursorMotion is how the overlay moves between positions (set_agent_cursor_motion), in
// the contract's fields. glide_duration_ms, start_handle, end_handle, arc_size and
// arc_flow shape the glide, idle_hide_ms hides an idle overlay; spring, turn_radius and
// dwell_after_click_ms are kept and reported but change nothing on X11.
type cursorMotion struct {
	StartHandle       float64 `json:"start_handle"`
	EndHandle         float64 `json:"end_handle"`
	ArcSize           float64 `json:"arc_size"`
	ArcFlow           float64 `json:"arc_flow"`
	Spring            float64 `json:"spring"`
	GlideDurationMS   float64 `json:"glide_duration_ms"`
	DwellAfterClickMS float64 `json:"dwell_after_click_ms"`
	IdleHideMS        float64 `json:"idle_hide_ms"`
	TurnRadius        float64 `json:"turn_radius"`
}

// defaultMotion is a session's motion until it sets its own.
var defaultMotion = cursorMotion{
	StartHandle: 0.35, EndHandle: 0.35, ArcSize: 0.2, ArcFlow: 0, Spring: 0.6,
	GlideDurationMS: 150, DwellAfterClickMS: 0, IdleHideMS: 0, TurnRadius: 80,
}

// motionArgs are set_agent_cursor_motion's arguments: nil (absent or null) keeps a value.
type motionArgs struct {
	Session           *string  `json:"session"`
	StartHandle       *float64 `json:"start_handle"`
	EndHandle         *float64 `json:"end_handle"`
	ArcSize           *float64 `json:"arc_size"`
	ArcFlow           *float64 `json:"arc_flow"`
	Spring            *float64 `json:"spring"`
	GlideDurationMS   *float64 `json:"glide_duration_ms"`
	DwellAfterClickMS *float64 `json:"dwell_after_click_ms"`
	IdleHideMS        *float64 `json:"idle_hide_ms"`
	TurnRadius        *float64 `json:"turn_radius"`
}

// motionField is one field of set_agent_cursor_motion with its accepted range.
type motionField struct {
	name     string
	min, max float64
	arg      func(*motionArgs) *float64
	val      func(*cursorMotion) *float64
}

var motionFields = []motionField{
	{"start_handle", 0, 1, func(a *motionArgs) *float64 { return a.StartHandle }, func(m *cursorMotion) *float64 { return &m.StartHandle }},
	{"end_handle", 0, 1, func(a *motionArgs) *float64 { return a.EndHandle }, func(m *cursorMotion) *float64 { return &m.EndHandle }},
	{"arc_size", 0, 1, func(a *motionArgs) *float64 { return a.ArcSize }, func(m *cursorMotion) *float64 { return &m.ArcSize }},
	{"arc_flow", -1, 1, func(a *motionArgs) *float64 { return a.ArcFlow }, func(m *cursorMotion) *float64 { return &m.ArcFlow }},
	{"spring", 0, 1, func(a *motionArgs) *float64 { return a.Spring }, func(m *cursorMotion) *float64 { return &m.Spring }},
	{"glide_duration_ms", 0, 2000, func(a *motionArgs) *float64 { return a.GlideDurationMS }, func(m *cursorMotion) *float64 { return &m.GlideDurationMS }},
	{"dwell_after_click_ms", 0, 5000, func(a *motionArgs) *float64 { return a.DwellAfterClickMS }, func(m *cursorMotion) *float64 { return &m.DwellAfterClickMS }},
	{"idle_hide_ms", 0, 600000, func(a *motionArgs) *float64 { return a.IdleHideMS }, func(m *cursorMotion) *float64 { return &m.IdleHideMS }},
	{"turn_radius", 0, 1000, func(a *motionArgs) *float64 { return a.TurnRadius }, func(m *cursorMotion) *float64 { return &m.TurnRadius }},
}

// apply returns m with a's values, or a refusal naming the first value out of range;
// m is unchanged then.
func (a *motionArgs) apply(m cursorMotion) (cursorMotion, error) {
	for _, f := range motionFields {
		v := f.arg(a)
		if v == nil {
			continue
		}
		if math.IsNaN(*v) || *v < f.min || *v > f.max {
			return m, invalid("%s %v: want %v–%v", f.name, *v, f.min, f.max)
		}
		*f.val(&m) = *v
	}
	return m, nil
}

// glidePoint is the overlay's position at fraction t (0–1) of a glide from a to b: a
// cubic Bézier whose handles lie start_handle and end_handle of the way along the line,
// pushed sideways by arc_size of its length (arc_flow moves the bulge towards the start
// or the end), walked with ease-in-out timing.
func (m cursorMotion) glidePoint(a, b x11.Point, t float64) x11.Point {
	t = min(max(t, 0), 1)
	e := t * t * (3 - 2*t)
	ax, ay, bx, by := float64(a.X), float64(a.Y), float64(b.X), float64(b.Y)
	dx, dy := bx-ax, by-ay
	length := math.Hypot(dx, dy)
	if length == 0 {
		return b
	}
	nx, ny := -dy/length, dx/length
	bulge := m.ArcSize * length
	c1x, c1y := ax+dx*m.StartHandle+nx*bulge*(1-m.ArcFlow), ay+dy*m.StartHandle+ny*bulge*(1-m.ArcFlow)
	c2x, c2y := bx-dx*m.EndHandle+nx*bulge*(1+m.ArcFlow), by-dy*m.EndHandle+ny*bulge*(1+m.ArcFlow)
	u := 1 - e
	x := u*u*u*ax + 3*u*u*e*c1x + 3*u*e*e*c2x + e*e*e*bx
	y := u*u*u*ay + 3*u*u*e*c1y + 3*u*e*e*c2y + e*e*e*by
	return x11.Point{X: int(math.Round(x)), Y: int(math.Round(y))}
}
