package search

import (
	"context"
	"time"

	"github.com/snowclaw/snowclaw"
)

// Doc is one searchable item, derived from a stored event (or a workspace
// file chunk). The relay builds Docs; this package never sees events.
type Doc struct {
	ID        string // event id (or a file chunk id)
	Kind      int
	Pubkey    string
	CreatedAt int64  // unix seconds
	D         string // full d tag, "" for non-addressable events (Address)
	Topic     string // for snow:memory:<topic>, the topic
	Text      string // the text that is searched (decrypted for private tiers)
	Tags      map[string][]string
	Tier      string // public, group, private, internal
	Group     string // h tag
	Source    string // snow:source (hex pubkey of the originating agent), else Pubkey
	Model     string // snow:model
	// Confidence is snow:confidence in [0,1]; 0 means not given.
	Confidence float64
	Supersedes []string // ids named by snow:supersedes
	Version    int      // snow:version; from 2 on, Supersedes[0] is the version replaced
	// LearntFrom is the hex key of the person the memory was learnt from
	// (snow:learnt-from), "" when unknown: versions of one memory learnt
	// from different people are a conflict (Conflicts).
	LearntFrom string
	// Volatile docs (decrypted private and internal memories) are kept in
	// RAM only and never written to the on-disk index.
	Volatile bool
	// KeywordOnly docs (short chat lines, docs/design.md#search) get no
	// embedding: they are found by BM25 alone.
	KeywordOnly bool
	// Scope names the partition the doc is ranked in: docs of one scope are
	// readable by the same readers. The caller derives it from its read
	// rule; a search only ranks over the scopes Query.Readable admits, so
	// statistics never include a doc its reader may not read.
	Scope string

	// Kept by the index while the doc is indexed, never by callers
	// (state.go: keep). Text and Tags are not in RAM then: the tags are
	// packed (search/tagpack) and a doc in the doc log has its text read
	// back from there when a result or a conflict shows it (doctext.go).
	off   int64    // offset of the doc's put record in the doc log; 0: Text is in RAM
	tagv  []string // Tags, packed
	spk   string   // speaker.Of(Text), needed by every search
	words int32    // countWords(Text) of a chat message (threadKey)
	slot  uint32   // the doc's slot in its part (parts.go)
}

// Address is kind:pubkey:d (snowclaw.Address) for a doc of an
// addressable kind with a d tag, "" otherwise. It is derived, not kept:
// a million memories would each hold a third copy of their author and d
// tag (about 130 MB at 1M).
func (d *Doc) Address() string {
	k, ok := addrOf(d)
	if !ok {
		return ""
	}
	return snowclaw.Address(k.kind, k.pubkey, k.d)
}

// Embedder turns texts into vectors. Name and Dim are recorded with the
// index; a change of either rebuilds the vectors.
type Embedder interface {
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ModelTier is a glob over snow:model values with a trust weight.
type ModelTier struct {
	Pattern string
	Weight  float64
}

// Options configure an Index.
type Options struct {
	Dir      string   // on-disk index directory (bleve + vectors)
	Embedder Embedder // nil: the built-in embedder

	BM25Weight   float64 // weight of the BM25 list in rank fusion (default 1)
	VectorWeight float64 // weight of the vector list in rank fusion (default 1)
	RRFK         float64 // reciprocal rank fusion constant (default 60)

	Sources      map[string]float64 // hex pubkey or "group:<id>" → trust weight
	ModelTiers   []ModelTier        // first match wins
	DefaultTrust float64            // trust of a source not listed (default 1)
	// Curators (hex pubkeys: the agent, the owner) may supersede anyone's
	// doc. Anyone else's snow:supersedes hides only docs of their own, or
	// any author could bury any memory by naming it.
	Curators        []string
	RecencyHalfLife time.Duration // 0 disables recency decay
	// Progress, when set, hears how far Open got reading the index from
	// disk: bytes done of total.
	Progress func(done, total int64)
}

// Query is one search.
type Query struct {
	Text    string // free text, extensions already removed (see ParseQuery)
	Limit   int
	Explain bool
	// Accept is called in rank order on candidates; only accepted docs are
	// returned, so the limit applies after the caller's filters and
	// visibility rule. nil accepts everything.
	Accept func(Doc) bool
	// Readable tells whether the reader may read the docs of a scope (see
	// Doc.Scope); it is asked once per scope per search, and everything the
	// search computes — BM25 statistics, vector ranks and the mean vector,
	// the length prior, fusion — covers readable scopes only. nil reads
	// every scope (the agent). Accept still applies per doc afterwards.
	Readable          func(scope string) bool
	IncludeSuperseded bool
}

// Result is one ranked hit.
type Result struct {
	Doc     Doc
	Score   float64
	Explain *Explain // set when Query.Explain
}

// Explain is the score breakdown of one result (the UI's debug view);
// the type is the API's, so a row reaches clients as the ranking wrote it.
type Explain = snowclaw.Explain
