package search

import (
	"github.com/snowclaw/snowclaw/search/glove"
	"github.com/snowclaw/snowclaw/search/hashembed"
)

// BuiltinEmbedderName is recorded with indexes built by the built-in
// embedder (search/hashembed).
const BuiltinEmbedderName = hashembed.Name

const builtinDim = hashembed.Dim

// NewBuiltinEmbedder returns the embedder used when Options.Embedder is nil.
func NewBuiltinEmbedder() Embedder { return hashembed.Embedder{} }

// NewHashEmbedder is the lexical built-in embedder (search/hashembed):
// feature-hashed words, word pairs and character n-grams.
func NewHashEmbedder() Embedder { return hashembed.Embedder{} }

// NewGloveEmbedder is the semantic built-in embedder (search/glove):
// SIF-weighted GloVe word vectors.
func NewGloveEmbedder() Embedder { return glove.New() }

// The vector floor's calibration and the length prior sample and count
// words as the embedder cuts them.
var (
	hashString = hashembed.Hash
	countWords = hashembed.CountWords
)
