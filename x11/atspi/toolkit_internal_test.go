package atspi

import "testing"

func TestShowingOnWindowsOnly(t *testing.T) {
	for toolkit, want := range map[string]bool{
		"GTK 4.8.3":   true,
		"gtk 4.6.9":   true,
		"GTK 4.0":     true,
		"GTK 4.10.1":  false,
		"GTK 4.12":    false,
		"GTK 3.24.38": false,
		"Qt 5.15.8":   false,
		"GTK":         false,
		"GTK 4":       false,
		"GTK 4.x":     false,
		"":            false,
	} {
		if got := showingOnWindowsOnly(toolkit); got != want {
			t.Errorf("showingOnWindowsOnly(%q) = %v, want %v", toolkit, got, want)
		}
	}
}
