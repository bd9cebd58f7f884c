package search

import (
	"testing"
	"time"
)

// TestSearch_DateLiftsTheMonth: of two docs that match alike, the one
// written in the month the query names ranks first.
func TestSearch_DateLiftsTheMonth(t *testing.T) {
	ix := openTest(t, Options{})
	may := time.Date(2023, time.May, 10, 0, 0, 0, 0, time.UTC).Unix()
	aug := time.Date(2023, time.August, 10, 0, 0, 0, 0, time.UTC).Unix()
	mustIndex(t, ix,
		Doc{ID: "aug", Text: "we went camping by the lake", CreatedAt: aug},
		Doc{ID: "may", Text: "we went camping by the lake", CreatedAt: may},
	)
	for q, first := range map[string]string{"camping in August": "aug", "camping in May 2023": "may"} {
		res := search(t, ix, Query{Text: q, Explain: true})
		if len(res) != 2 || res[0].Doc.ID != first || res[0].Explain.Date != 2 || res[1].Explain.Date != 1 {
			t.Errorf("%q: %v, want %s first with date factor 2", q, ids(res), first)
		}
	}
}
