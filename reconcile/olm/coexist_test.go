package olm

import (
	"errors"
	"testing"
)

func TestDecide(t *testing.T) {
	found := []string{"Deployment olm/olm-operator"}
	tests := []struct {
		mode      Mode
		found     []string
		wantStart bool
		wantErr   bool
	}{
		{ModeEmbedded, nil, true, false},
		{ModeEmbedded, found, true, false},
		{ModeExternal, nil, false, false},
		{ModeExternal, found, false, false},
		{ModeAuto, nil, true, false},
		{ModeAuto, found, false, true},
	}
	for _, tt := range tests {
		start, err := Decide(tt.mode, tt.found)
		if start != tt.wantStart || (err != nil) != tt.wantErr {
			t.Errorf("Decide(%s, %v) = %v, %v", tt.mode, tt.found, start, err)
		}
		if err != nil && !errors.Is(err, ErrOLMPresent) {
			t.Errorf("error %v does not wrap ErrOLMPresent", err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"embedded", "external", "auto"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("both"); err == nil {
		t.Error(`ParseMode("both") accepted`)
	}
}
