package learneval

import (
	"encoding/json"
	"regexp"
	"strings"
)

var (
	msgNumRE = regexp.MustCompile(`(?m)^\[(\d+)\] `)
	memIDRE  = regexp.MustCompile(`- id ([0-9a-f]{12}) `)
	candRE   = regexp.MustCompile(`(?m)^Candidate (\d+): (.*)$`)
)

// Answer is the scripted model's answer to a chat whose last message is
// user, asked to follow schema (nil: a plain reply): replies are "ok";
// extraction answers the script's memories of the messages in the batch;
// decisions file as UPDATE of the first similar memory what the script
// marks update, and ADD the rest; summaries are one line.
func (s *Script) Answer(user string, schema []byte) string {
	if len(schema) == 0 {
		return "ok"
	}
	f := string(schema)
	switch {
	case strings.Contains(f, `"memories"`):
		return s.extract(user)
	case strings.Contains(f, `"decisions"`):
		return s.decide(user)
	case strings.Contains(f, `"summary"`):
		return `{"summary": "The crew planned the moon base."}`
	}
	return "{}"
}

func (s *Script) extract(user string) string {
	out := []map[string]any{}
	for _, se := range s.Sessions {
		for _, m := range se.Messages {
			at := strings.Index(user, m.Text)
			if at < 0 {
				continue
			}
			num := "1"
			for _, x := range msgNumRE.FindAllStringSubmatch(user[:at], -1) {
				num = x[1]
			}
			for _, l := range m.Learn {
				mem := map[string]any{"text": l.Text, "kind": l.Kind, "message": json.Number(num), "about": l.About, "confidence": 0.8}
				if l.When != "" {
					mem["when"] = l.When
				}
				if len(l.Topics) > 0 {
					mem["topics"] = l.Topics
				}
				out = append(out, mem)
			}
		}
	}
	b, _ := json.Marshal(map[string]any{"memories": out})
	return string(b)
}

func (s *Script) decide(user string) string {
	update := map[string]bool{}
	for _, se := range s.Sessions {
		for _, m := range se.Messages {
			for _, l := range m.Learn {
				if l.Update {
					update[l.Text] = true
				}
			}
		}
	}
	out := []map[string]any{}
	for _, block := range strings.Split(user, "\n\n") {
		c := candRE.FindStringSubmatch(block)
		if c == nil {
			continue
		}
		d := map[string]any{"candidate": json.Number(c[1]), "action": "ADD"}
		for text := range update {
			if id := memIDRE.FindStringSubmatch(block); id != nil && strings.HasPrefix(c[2], text[:min(len(text), 20)]) {
				d["action"], d["target"] = "UPDATE", id[1]
			}
		}
		out = append(out, d)
	}
	b, _ := json.Marshal(map[string]any{"decisions": out})
	return string(b)
}
