package search

import "github.com/snowclaw/snowclaw/search/hashembed"

// BuiltinEmbedderName is recorded with indexes built by the built-in
// embedder (search/hashembed).
const BuiltinEmbedderName = hashembed.Name

const builtinDim = hashembed.Dim

// NewBuiltinEmbedder returns the embedder used when Options.Embedder is nil.
func NewBuiltinEmbedder() Embedder { return hashembed.Embedder{} }

// The vector floor's calibration and the length prior sample and count
// words as the embedder cuts them.
var (
	hashString = hashembed.Hash
	countWords = hashembed.CountWords
)
