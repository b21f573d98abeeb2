package e2e

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// officeSettings turn off what LibreOffice changes in typed text (capitals at the start of
// a sentence, typographic quotes and dashes, replacements, word completion, Calc's
// AutoInput) and its tip of the day, so that the saved document holds the keys as typed.
const officeSettings = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
` + `%s</oor:items>
`

func officeItems() string {
	var b strings.Builder
	item := func(path, name, value string) {
		fmt.Fprintf(&b, "<item oor:path=%q><prop oor:name=%q oor:op=\"fuse\"><value>%s</value></prop></item>\n", path, name, value)
	}
	for _, p := range []string{"CapitalAtStartSentence", "ReplaceDoubleQuote", "ReplaceSingleQuote", "UseReplacementTable",
		"TwoCapitalsAtStart", "ChangeDash", "SetInetAttribute", "ChangeUnderlineWeight", "SingleQuoteAtStart"} {
		item("/org.openoffice.Office.Common/AutoCorrect", p, "false")
	}
	for _, p := range []string{"CapitalAtStartSentence", "UseReplacementTable", "TwoCapitalsAtStart", "ChangeDash",
		"SetInetAttribute", "ChangeUnderlineWeight", "ChangeOrdinalNumber"} {
		item("/org.openoffice.Office.Writer/AutoFunction/Format/Option", p, "false")
	}
	item("/org.openoffice.Office.Writer/AutoFunction/Completion", "Enable", "false")
	item("/org.openoffice.Office.Calc/Input", "AutoInput", "false")
	item("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false")
	return b.String()
}

// officeOpen makes an empty document (.odt or .ods) with soffice --headless --convert-to
// in a private profile, and returns the person's command line opening it.
func officeOpen(t *testing.T, desk *compatDesk, dir, module, ext string) ([]string, cellProbe) {
	t.Helper()
	profile := filepath.Join(dir, "lo-profile")
	if err := os.MkdirAll(filepath.Join(profile, "user"), 0o755); err != nil {
		t.Fatal(err)
	}
	xcu := fmt.Sprintf(officeSettings, officeItems())
	if err := os.WriteFile(filepath.Join(profile, "user", "registrymodifications.xcu"), []byte(xcu), 0o644); err != nil {
		t.Fatal(err)
	}
	env := "-env:UserInstallation=file://" + profile
	src := filepath.Join(dir, "note.txt")
	if ext == "ods" {
		src = filepath.Join(dir, "note.csv")
	}
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	conv := exec.Command("soffice", env, "--headless", "--convert-to", ext, "--outdir", dir, src)
	conv.Env = desk.env()
	if out, err := conv.CombinedOutput(); err != nil {
		t.Fatalf("soffice --convert-to %s: %v: %s", ext, err, out)
	}
	doc := strings.TrimSuffix(src, filepath.Ext(src)) + "." + ext
	if _, err := os.Stat(doc); err != nil {
		t.Fatalf("soffice made no %s: %v", doc, err)
	}
	argv := []string{"soffice", env, "--norestore", "--nologo", "--" + module, doc}
	if module == "calc" {
		return argv, &calcProbe{doc: doc}
	}
	return argv, &writerProbe{doc: doc}
}

// officeText reads the document's content.xml: its paragraphs' text (spaces, tabs and
// line breaks as typed), and for a spreadsheet the cells holding text by row and column
// (from 1).
func officeText(doc string) (paras []string, cells map[[2]int]string, err error) {
	out, err := exec.Command("unzip", "-p", doc, "content.xml").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("unzip content.xml: %w", err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(out)))
	cells = map[[2]int]string{}
	var cur *strings.Builder
	row, col := 0, 0
	var cellText []string
	rep := func(se xml.StartElement, name string) int {
		for _, a := range se.Attr {
			if a.Name.Local == name {
				n, _ := strconv.Atoi(a.Value)
				return n
			}
		}
		return 1
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("parse content.xml: %w", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "table-row":
				row++
				col = 0
			case "table-cell", "covered-table-cell":
				col++
				cellText = nil
				if n := rep(el, "number-columns-repeated"); n > 1 {
					col += n - 1
				}
			case "p", "h":
				cur = &strings.Builder{}
			case "s":
				if cur != nil {
					cur.WriteString(strings.Repeat(" ", rep(el, "c")))
				}
			case "tab":
				if cur != nil {
					cur.WriteString("\t")
				}
			case "line-break":
				if cur != nil {
					cur.WriteString("\n")
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.Write(el)
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "p", "h":
				if cur != nil {
					paras = append(paras, cur.String())
					cellText = append(cellText, cur.String())
				}
				cur = nil
			case "table-cell":
				if row > 0 && len(cellText) > 0 {
					cells[[2]int{row, col}] = strings.Join(cellText, "\n")
				}
				cellText = nil
			case "table-row":
				// number-rows-repeated rows are empty; their count does not matter for
				// the cells written before them.
			}
		}
	}
	return paras, cells, nil
}

// writerProbe: Writer on an empty .odt, measured as an editor is, the witness being the
// saved document's paragraphs joined by newlines.
type writerProbe struct{ doc string }

func (p *writerProbe) ready(t *testing.T) error {
	time.Sleep(3 * time.Second)
	return nil
}

func (p *writerProbe) read() string {
	paras, _, err := officeText(p.doc)
	if err != nil {
		return err.Error()
	}
	return strings.Join(paras, "\n")
}

func (p *writerProbe) typing(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{a.call(t, "type_text", "text", compatSent)}
	calls = append(calls, a.call(t, "hotkey", "keys", []string{"ctrl", "s"}))
	got, ok := witness(10*time.Second, func() (string, bool) { s := p.read(); return s, s == compatSent })
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: compatSent, Got: got,
		Witness: "the saved document's text", Contract: contractOf(calls)}
}

func (p *writerProbe) click(t *testing.T, a *agentOn) *compatMeasure {
	return (&editorProbe{}).clickWith(t, a, p.read, "the saved document's text")
}

// calcProbe: Calc on an empty .ods. Typing: the text and Return into A1, then save; A1
// holds the text. Click: a click in the middle of the sheet, "q" and Return, save: the
// q is in a cell other than A2 (where it would be without the click).
type calcProbe struct{ doc string }

func (p *calcProbe) ready(t *testing.T) error {
	time.Sleep(3 * time.Second)
	return nil
}

func (p *calcProbe) cells() map[[2]int]string {
	_, cells, err := officeText(p.doc)
	if err != nil {
		return map[[2]int]string{{0, 0}: err.Error()}
	}
	return cells
}

func (p *calcProbe) typing(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{a.call(t, "type_text", "text", compatSent)}
	calls = append(calls, a.call(t, "press_key", "key", "Return"))
	calls = append(calls, a.call(t, "hotkey", "keys", []string{"ctrl", "s"}))
	got, ok := witness(10*time.Second, func() (string, bool) { s := p.cells()[[2]int{1, 1}]; return s, s == compatSent })
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: compatSent, Got: got,
		Witness: "cell A1 of the saved sheet", Contract: contractOf(calls)}
}

func (p *calcProbe) click(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{a.call(t, "click", "x", a.frame.Width*6/10, "y", a.frame.Height/2)}
	calls = append(calls, a.call(t, "type_text", "text", clickMark))
	calls = append(calls, a.call(t, "press_key", "key", "Return"))
	calls = append(calls, a.call(t, "hotkey", "keys", []string{"ctrl", "s"}))
	where := func() (string, bool) {
		at := []string{}
		ok := false
		for rc, s := range p.cells() {
			if s == clickMark {
				at = append(at, fmt.Sprintf(clickMark+" in row %d column %d", rc[0], rc[1]))
				ok = rc != [2]int{2, 1}
			}
		}
		return strings.Join(at, ", "), ok && len(at) == 1
	}
	got, ok := witness(10*time.Second, where)
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: clickMark + " in a cell other than A2", Got: got,
		Witness: "the saved sheet's cells", Contract: contractOf(calls)}
}
