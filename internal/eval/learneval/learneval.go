// Package learneval is `snowclaw eval learning`: a scripted multi-session
// conversation (groups and private messages over two weeks), what a
// scripted model extracts from each message, and probe questions the
// learnt memory must answer through NIP-50 (expected memory in the top 3)
// or must not answer (a private memory asked for by someone else). The
// command drives a real relay with it; this package holds the data, the
// scripted model and the scoring.
package learneval

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

//go:embed testdata/conversation.json
var builtin []byte

// Script is the conversation and its probes.
type Script struct {
	About    string    `json:"about"`
	People   []string  `json:"people"`
	Group    string    `json:"group"`
	Sessions []Session `json:"sessions"`
	Probes   []Probe   `json:"probes"`
}

// Session is one sitting: in the group, or in private with one person.
type Session struct {
	Date     time.Time `json:"date"`
	Where    string    `json:"where"` // "group" or "private"
	With     string    `json:"with"`  // private: the person
	Messages []Message `json:"messages"`
}

// Message is one message; Learn is what the scripted model extracts.
type Message struct {
	From  string   `json:"from"`
	Text  string   `json:"text"`
	Learn []Memory `json:"learn"`
}

// Memory is one scripted extraction.
type Memory struct {
	Text   string   `json:"text"`
	Kind   string   `json:"kind"`
	About  string   `json:"about"`
	When   string   `json:"when"`
	Topics []string `json:"topics"`
	Update bool     `json:"update"` // filed as a new version of the most similar memory
}

// Probe is one question asked by Reader through NIP-50: one of the top 3
// memories must contain every Expect string (case-insensitive), and none
// of them any Absent string. A person record probe names Record and In
// instead: the notes and preferences a prompt answering that person shows
// "group" (in the script's group) or "private" (in private with them) are
// judged the same way, one line each. A Conflicts probe judges Reader's
// conflict dashboard the same way, one line per conflict holding the
// texts of its memories.
type Probe struct {
	Reader    string   `json:"reader,omitempty"`
	Query     string   `json:"query,omitempty"`
	Conflicts bool     `json:"conflicts,omitempty"`
	Record    string   `json:"record,omitempty"`
	In        string   `json:"in,omitempty"`
	Expect    []string `json:"expect"`
	Absent    []string `json:"absent"`
}

// Who names the probe's asker in a report: the reader, or the person
// record and where it is shown.
func (p Probe) Who() string {
	if p.Record != "" {
		return p.Record + "@" + p.In
	}
	return p.Reader
}

// Load reads a script; "" is the built-in one.
func Load(path string) (*Script, error) {
	raw := builtin
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var s Script
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("learning script: %w", err)
	}
	return &s, s.check()
}

func (s *Script) check() error {
	known := map[string]bool{}
	for _, p := range s.People {
		known[p] = true
	}
	if s.Group == "" || len(s.People) == 0 || len(s.Probes) == 0 {
		return errors.New("learning script: needs people, a group and probes")
	}
	for i, se := range s.Sessions {
		if se.Where != "group" && (se.Where != "private" || !known[se.With]) {
			return fmt.Errorf("learning script: session %d: where must be group, or private with one of the people", i+1)
		}
		for _, m := range se.Messages {
			if !known[m.From] {
				return fmt.Errorf("learning script: session %d: unknown speaker %q", i+1, m.From)
			}
		}
	}
	for i, p := range s.Probes {
		asker := known[p.Reader] && p.Record == ""
		if p.Record != "" {
			asker = known[p.Record] && (p.In == "group" || p.In == "private")
		}
		if !asker || len(p.Expect)+len(p.Absent) == 0 {
			return fmt.Errorf("learning script: probe %d: needs a known reader (or a known record in group or private) and expect or absent", i+1)
		}
	}
	return nil
}

// Result is one probe's outcome.
type Result struct {
	Probe Probe
	Top   []string // texts of the top memories found
	OK    bool
}

// Judge scores one probe against the texts of the top memories.
func Judge(p Probe, top []string) Result {
	r := Result{Probe: p, Top: top}
	hasAll := func(t string, subs []string) bool {
		for _, s := range subs {
			if !strings.Contains(strings.ToLower(t), strings.ToLower(s)) {
				return false
			}
		}
		return true
	}
	found := len(p.Expect) == 0
	for _, t := range top {
		found = found || hasAll(t, p.Expect)
		for _, a := range p.Absent {
			if strings.Contains(strings.ToLower(t), strings.ToLower(a)) {
				return r
			}
		}
	}
	r.OK = found
	return r
}
