package search

import "testing"

func TestConflicts_Cases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		docs  []Doc
		topic string
		want  []string // ids of the one conflict, in order; nil = none
	}{
		{"same source differs", []Doc{
			{ID: "a", Source: "s1", Topic: "x", Text: "port 80"},
			{ID: "b", Source: "s1", Topic: "x", Text: "port 81"},
		}, "x", nil},
		{"sources agree", []Doc{
			{ID: "a", Source: "s1", Topic: "x", Text: "Port 80"},
			{ID: "b", Source: "s2", Topic: "x", Text: "port  80"},
		}, "x", nil},
		{"sources disagree, trusted first", []Doc{
			{ID: "a", Source: "s2", Topic: "x", Text: "port 80"},
			{ID: "b", Source: "s1", Topic: "x", Text: "port 81"},
		}, "x", []string{"b", "a"}},
		{"superseded one does not count", []Doc{
			{ID: "a", Source: "s2", Topic: "x", Text: "port 80"},
			{ID: "b", Source: "s1", Topic: "x", Text: "port 81", Supersedes: []string{"a"}},
		}, "x", nil},
		{"other topic", []Doc{
			{ID: "a", Source: "s2", Topic: "y", Text: "port 80"},
			{ID: "b", Source: "s1", Topic: "y", Text: "port 81"},
		}, "x", nil},
		{"all topics", []Doc{
			{ID: "a", Source: "s2", Topic: "y", Text: "port 80"},
			{ID: "b", Source: "s1", Topic: "y", Text: "port 81"},
		}, "", []string{"b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{Sources: map[string]float64{"s1": 1, "s2": 0.5}})
			mustIndex(t, ix, tc.docs...)
			cs, err := ix.Conflicts(tc.topic, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if len(cs) != 0 {
					t.Fatalf("unexpected conflicts %+v", cs)
				}
				return
			}
			if len(cs) != 1 || len(cs[0].Docs) != len(tc.want) {
				t.Fatalf("conflicts %+v, want one with %v", cs, tc.want)
			}
			for i, id := range tc.want {
				if cs[0].Docs[i].ID != id {
					t.Fatalf("order %v, want %v", cs[0].Docs, tc.want)
				}
			}
		})
	}
}
