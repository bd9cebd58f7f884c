package snowclaw

import (
	"os"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestTags_AreTheDocumentedSchema: every tag and profile key the schema
// names is the one docs/events.md documents, so a typo in a constant
// cannot quietly fork the wire format.
func TestTags_AreTheDocumentedSchema(t *testing.T) {
	b, err := os.ReadFile("docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, tag := range []string{TagTier, TagSource, TagModel, TagConfidence, TagVersion, TagSupersedes, TagResolution, TagLearntFrom, TagKeyVersion} {
		if !strings.Contains(doc, `["`+tag+`", `) {
			t.Errorf("tag %s is not in the memory items' table of docs/events.md", tag)
		}
	}
	for _, key := range []string{ProfileModel, ProfileVersion, ProfileCapabilities, ProfileOperator} {
		if !strings.Contains(doc, "`"+key+"`") {
			t.Errorf("profile key %s is not in docs/events.md", key)
		}
	}
	for _, tag := range []string{TagPath, TagChunk, TagHash} {
		if !strings.Contains(doc, "`"+tag+"`") {
			t.Errorf("file chunk tag %s is not in docs/events.md", tag)
		}
	}
	if d := MemoryItemD("project/x"); !ReadEvent(&nostr.Event{Kind: KindAppData, Tags: nostr.Tags{{"d", d}}}).IsMemoryItem() {
		t.Errorf("MemoryItemD made %q, not a memory item's d tag", d)
	}
	if ReadEvent(&nostr.Event{Kind: 1, Tags: nostr.Tags{{"d", MemoryItemD("x")}}}).IsMemoryItem() {
		t.Error("a kind 1 event counted as a memory item")
	}
}
