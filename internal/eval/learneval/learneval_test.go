package learneval

import (
	"os"
	"path/filepath"
	"testing"
)

func TestJudge(t *testing.T) {
	tests := []struct {
		name string
		p    Probe
		top  []string
		want bool
	}{
		{"found", Probe{Expect: []string{"berlin"}}, []string{"x", "alice lives in Berlin"}, true},
		{"every string in one memory", Probe{Expect: []string{"alice", "Berlin"}}, []string{"alice", "Berlin"}, false},
		{"missing", Probe{Expect: []string{"Berlin"}}, []string{"alice lives in Paris"}, false},
		{"absent holds", Probe{Absent: []string{"green tea"}}, []string{"bob likes chess"}, true},
		{"absent broken", Probe{Absent: []string{"green tea"}}, []string{"alice prefers Green Tea"}, false},
		{"nothing found, nothing expected", Probe{Absent: []string{"x"}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Judge(tc.p, tc.top).OK; got != tc.want {
				t.Errorf("Judge = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	s, err := Load("")
	if err != nil || len(s.Sessions) == 0 || len(s.Probes) == 0 {
		t.Fatalf("built-in script: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"people":["a"],"group":"g","sessions":[{"where":"private","with":"zed","messages":[]}],"probes":[{"reader":"a","expect":["x"]}]}`), 0o600)
	if _, err := Load(bad); err == nil {
		t.Fatal("a private session with an unknown person loaded")
	}
	for _, probe := range []string{`{"record":"a","in":"elsewhere","expect":["x"]}`, `{"record":"zed","in":"group","expect":["x"]}`} {
		os.WriteFile(bad, []byte(`{"people":["a"],"group":"g","sessions":[],"probes":[`+probe+`]}`), 0o600)
		if _, err := Load(bad); err == nil {
			t.Fatalf("probe %s loaded", probe)
		}
	}
}
