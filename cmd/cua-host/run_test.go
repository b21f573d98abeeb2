package main

import "testing"

func TestParseScreen(t *testing.T) {
	tests := []struct {
		in   string
		w, h int
		ok   bool
	}{
		{"1920x1080", 1920, 1080, true},
		{"1280X800", 1280, 800, true},
		{"64x64", 64, 64, true},
		{"8192x8192", 8192, 8192, true},
		{"63x100", 0, 0, false},
		{"100x8193", 0, 0, false},
		{"1920", 0, 0, false},
		{"x1080", 0, 0, false},
		{"1920x", 0, 0, false},
		{"axb", 0, 0, false},
		{"-1x100", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			w, h, err := parseScreen(tc.in)
			if (err == nil) != tc.ok || w != tc.w || h != tc.h {
				t.Errorf("parseScreen(%q) = %d, %d, %v; want %d, %d, ok=%v", tc.in, w, h, err, tc.w, tc.h, tc.ok)
			}
		})
	}
}
