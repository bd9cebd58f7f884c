package memsearch

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/glove"
	"github.com/snowclaw/snowclaw/search/hashembed"
	"github.com/snowclaw/snowclaw/search/indexdir"
)

// An index built with one built-in embedder and opened with the other is
// rebuilt from the store at start, with progress, and records the new
// embedder and dimension: vectors of two embedders are never compared.
func TestLoad_EmbedderSwitchRebuilds(t *testing.T) {
	e := newLoadEnv(t)
	for i := range 300 {
		e.save(t, fmt.Sprintf("ops/host%d", i), fmt.Sprintf("host %d runs the nightly backup", i))
	}
	kitten := e.save(t, "pets", "Their kitten is named Whiskers")
	dir := filepath.Join(e.indexDir, "index")
	open := func(emb search.Embedder, progress func(done, total int)) *Plugin {
		t.Helper()
		o := e.options(progress)
		o.Search.Embedder = emb
		p, err := Start(o)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Loaded():
		case <-time.After(time.Minute):
			t.Fatal("the index did not load")
		}
		if err := p.State().Err; err != nil {
			t.Fatal(err)
		}
		return p
	}
	meta := func() indexdir.Meta {
		t.Helper()
		m, err := indexdir.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	p := open(search.NewHashEmbedder(), nil)
	if got := findText(t, p, "", "what is the cat called"); len(got) != 0 {
		t.Fatalf("the hash embedder found %d by meaning", len(got))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if m := meta(); m.Embedder != hashembed.Name || m.Dim != hashembed.Dim {
		t.Fatalf("meta %+v, want %s/%d", m, hashembed.Name, hashembed.Dim)
	}

	var mu sync.Mutex
	most := 0
	p = open(glove.New(), func(done, total int) {
		mu.Lock()
		most = max(most, done)
		mu.Unlock()
	})
	t.Cleanup(func() { p.Close() })
	if m := meta(); m.Embedder != glove.Name || m.Dim != glove.Dim {
		t.Fatalf("meta %+v after the switch, want %s/%d", m, glove.Name, glove.Dim)
	}
	mu.Lock()
	if most < 301 {
		t.Errorf("the rebuild reported %d docs done, want all 301", most)
	}
	mu.Unlock()
	got := findText(t, p, "", "what is the cat called")
	if len(got) == 0 || got[0].ID != kitten.ID {
		t.Fatalf("after the switch the kitten is not found by meaning: %d results", len(got))
	}
	if got := findText(t, p, "", "host 17 nightly backup"); len(got) == 0 {
		t.Fatal("keyword search after the switch found nothing")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// and back
	p = open(search.NewHashEmbedder(), nil)
	t.Cleanup(func() { p.Close() })
	if m := meta(); m.Embedder != hashembed.Name || m.Dim != hashembed.Dim {
		t.Fatalf("meta %+v after switching back", m)
	}
	if got := findText(t, p, "", "kitten whiskers"); len(got) != 1 {
		t.Fatalf("after switching back: %d results", len(got))
	}
}
