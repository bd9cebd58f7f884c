package main

import (
	"testing"

	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/glove"
	"github.com/snowclaw/snowclaw/search/hashembed"
)

func TestBuiltinEmbedder_Names(t *testing.T) {
	for name, want := range map[string]string{"hash": hashembed.Name, "glove": glove.Name} {
		e := builtinEmbedder(name)
		if e == nil || e.Name() != want {
			t.Errorf("embedder = %q: %v, want %s", name, e, want)
		}
		c := DefaultConfig()
		c.Search.Embedder = name
		if err := c.Validate(); err != nil {
			t.Errorf("embedder = %q: %v", name, err)
		}
	}
	if e := builtinEmbedder("builtin"); e != nil {
		t.Errorf("builtin: %s, want the search package's default (nil)", e.Name())
	}
	if search.NewBuiltinEmbedder() == nil {
		t.Fatal("no default embedder")
	}
	c := DefaultConfig()
	c.Search.Embedder = "word2vec"
	if err := c.Validate(); err == nil {
		t.Error("an unknown embedder was accepted")
	}
}
