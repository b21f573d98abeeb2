package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"

	"github.com/cua-host/cua-host/host/journal"
)

// WriteHTML writes the report as one self-contained HTML page: inline style and script,
// screenshots embedded as data: URIs (only those whose file still matches its hash), and a
// Content-Security-Policy that lets the page load nothing from anywhere.
func WriteHTML(w io.Writer, r *Report) error {
	if err := page.Execute(w, newView(r)); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type view struct {
	R        *Report
	Calls    []callView
	Sessions []string
	Tools    []string
	Outcomes []string
	Refusals []kv
}

type kv struct {
	K string
	V int
}

type callView struct {
	Call
	N        int
	Args     string
	Result   string
	Duration string
	Before   *shotView
	After    *shotView
	Status   string
}

type shotView struct {
	Src    template.URL
	W, H   int
	Mark   *markView
	Reason string
}

type markView struct {
	X, Y, W, H float64
	Point      bool
}

func newView(r *Report) view {
	v := view{R: r}
	seen := map[string]map[string]bool{"s": {}, "t": {}, "o": {}}
	add := func(kind, val string, into *[]string) {
		if !seen[kind][val] {
			seen[kind][val] = true
			*into = append(*into, val)
		}
	}
	for i, c := range r.Calls {
		cv := callView{Call: c, N: i + 1, Args: string(c.Arguments), Result: string(c.Result), Duration: fmtUS(c.DurationUS)}
		cv.Before = shotOf(c.Before, c.Target)
		cv.After = shotOf(c.After, c.Target)
		switch {
		case c.Refusal != nil:
			cv.Status = "refused"
		case c.Outcome == "unknown":
			cv.Status = "unknown"
		case c.IsError:
			cv.Status = "error"
		default:
			cv.Status = "ok"
		}
		v.Calls = append(v.Calls, cv)
		add("s", c.Session, &v.Sessions)
		add("t", c.Tool, &v.Tools)
		add("o", c.Outcome, &v.Outcomes)
	}
	sort.Strings(v.Tools)
	for k, n := range r.Summary.Refusals {
		v.Refusals = append(v.Refusals, kv{k, n})
	}
	sort.Slice(v.Refusals, func(i, j int) bool {
		return v.Refusals[i].V > v.Refusals[j].V || (v.Refusals[i].V == v.Refusals[j].V && v.Refusals[i].K < v.Refusals[j].K)
	})
	return v
}

// shotOf embeds a screenshot and places the target on it (root coordinates scaled).
func shotOf(s *Shot, target *journal.Rect) *shotView {
	if s == nil {
		return nil
	}
	sv := &shotView{W: s.Width, H: s.Height}
	b, ok := readShot(s)
	switch {
	case s.Error != "":
		sv.Reason = "no screenshot: " + s.Error
		return sv
	case s.Pruned:
		sv.Reason = "screenshot pruned (budget)"
		return sv
	case !ok:
		sv.Reason = "screenshot missing or modified"
		return sv
	}
	// The bytes match the hash the chained record names: they are the capture, a PNG.
	sv.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
	if target != nil && s.Scale > 0 {
		m := &markView{X: float64(target.X) * s.Scale, Y: float64(target.Y) * s.Scale, W: float64(target.Width) * s.Scale, H: float64(target.Height) * s.Scale}
		m.Point = target.Width == 0 && target.Height == 0
		sv.Mark = m
	}
	return sv
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"us": fmtUS,
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
}).Parse(pageHTML))
