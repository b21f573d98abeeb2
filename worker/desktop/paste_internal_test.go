package desktop

import (
	"testing"

	"github.com/cua-host/cua-host/x11/atspi"
)

func TestPasteElement(t *testing.T) {
	tests := []struct {
		name string
		el   atspi.Element
		want bool
	}{
		{name: "menu item Paste", el: atspi.Element{Role: "menu item", Name: "Paste"}, want: true},
		{name: "GTK mnemonic", el: atspi.Element{Role: "menu item", Name: "_Paste"}, want: true},
		{name: "Paste Special", el: atspi.Element{Role: "menu item", Name: "Paste Special…"}, want: true},
		{name: "lowercase with spaces", el: atspi.Element{Role: "push button", Name: "  paste "}, want: true},
		{name: "paste action", el: atspi.Element{Role: "push button", Name: "Insert", Actions: []string{"click", "paste"}}, want: true},
		{name: "Copy", el: atspi.Element{Role: "menu item", Name: "Copy"}},
		{name: "Pasteur", el: atspi.Element{Role: "label", Name: "Pasteur"}},
		{name: "unnamed button", el: atspi.Element{Role: "push button", Actions: []string{"click"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pasteElement(&tt.el); got != tt.want {
				t.Errorf("pasteElement(%q, %v) = %v, want %v", tt.el.Name, tt.el.Actions, got, tt.want)
			}
		})
	}
}
