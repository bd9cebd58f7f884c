package main

import "github.com/snowclaw/snowclaw/search"

// builtinEmbedder is the embedder `[search] embedder` names among the
// built-in ones: "hash" (search/hashembed, lexical), "glove"
// (search/glove, by meaning). "builtin" is nil, the search package's
// default (NewBuiltinEmbedder); so is "ollama", which serve builds.
func builtinEmbedder(name string) search.Embedder {
	switch name {
	case "hash":
		return search.NewHashEmbedder()
	case "glove":
		return search.NewGloveEmbedder()
	}
	return nil
}
