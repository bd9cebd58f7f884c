package dynconfig

import "testing"

func TestParseRespondMode(t *testing.T) {
	tests := []struct {
		in      string
		want    RespondMode
		wantErr bool
	}{
		{"all", All, false},
		{"mention", Mention, false},
		{"owner", Owner, false},
		{"none", None, false},
		{" Mention ", Mention, false},
		{"OWNER", Owner, false},
		{"", "", true},
		{"mentions", "", true},
		{"everyone", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRespondMode(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseRespondMode(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDefaults_AsDocumented(t *testing.T) {
	if Defaults != (Settings{RespondMode: Mention, ContextHistory: 20}) {
		t.Errorf("Defaults = %+v, want mention/20 (docs/events.md#dynamic-config)", Defaults)
	}
}
