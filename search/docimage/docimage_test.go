package docimage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand"
	"reflect"
	"testing"
)

func sample() (Header, []Doc, []Part) {
	h := Header{Tag: []byte("tag-of-the-log"), Dim: 3, Dead: 7}
	var docs []Doc
	for i := range 50 {
		d := Doc{ID: fmt.Sprintf("id%03d", i), Pubkey: []string{"alice", "bob"}[i%2], D: fmt.Sprintf("snow:memory:t/%d", i),
			Topic: fmt.Sprintf("t/%d", i), Tier: "public", Scope: []string{"public", "group:x"}[i%2], Speaker: "Alice",
			Kind: 30078, Version: i % 3, CreatedAt: int64(1000 - 40*i), Off: int64(18 + 100*i), Confidence: 0.5,
			KeywordOnly: i%5 == 0, Words: int32(i), Slot: uint32(i / 2),
			Tags: []string{"d", fmt.Sprintf("snow:memory:t/%d", i), "t", "ops", "x", fmt.Sprint("free ", i)}}
		if i%7 == 0 {
			d.Supersedes, d.Topic = []string{"old1", "old2"}, "not the tail"
		}
		docs = append(docs, d)
	}
	parts := []Part{
		{Scope: "public", Slots: 25, VN: 20, VSum: []float64{1, 2, 3}, Postings: []byte("opaque-1")},
		{Scope: "group:x", Slots: 25, ChatN: 2, ChatW: 9, VSum: []float64{-1, 0, 0.5}, Postings: []byte("opaque-2")},
	}
	h.Docs, h.Parts = len(docs), len(parts)
	return h, docs, parts
}

func encode(t *testing.T, h Header, docs []Doc, parts []Part) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, h, func(name string) bool { return name == "t" })
	for i := range docs {
		w.Doc(&docs[i])
	}
	for i := range parts {
		w.Part(&parts[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(img []byte) (Header, []Doc, []Part, error) {
	var docs []Doc
	var parts []Part
	h, err := Read(img, func(d *Doc) error {
		docs = append(docs, *d)
		return nil
	}, func(p *Part) error {
		c := *p
		c.VSum = append([]float64(nil), p.VSum...)
		parts = append(parts, c)
		return nil
	}, nil)
	return h, docs, parts, err
}

// What is written is read back, field for field.
func TestImage_RoundTrip(t *testing.T) {
	h, docs, parts := sample()
	gh, gd, gp, err := decode(encode(t, h, docs, parts))
	if err != nil {
		t.Fatal(err)
	}
	gh.Strings = nil
	if !reflect.DeepEqual(gh, h) || !reflect.DeepEqual(gd, docs) || !reflect.DeepEqual(gp, parts) {
		t.Fatalf("read back differs:\n%+v\n%+v", gh, h)
	}
}

// Damage is refused, never a panic nor an allocation beyond the image's
// size: flipped bytes behind a checksum made right again reach the
// parser itself, and every cut is refused.
func TestImage_DamageIsRefused(t *testing.T) {
	h, docs, parts := sample()
	img := encode(t, h, docs, parts)
	for cut := range len(img) {
		if _, _, _, err := decode(img[:cut]); err == nil {
			t.Fatalf("a cut at %d of %d bytes was read", cut, len(img))
		}
	}
	r := rand.New(rand.NewSource(9))
	tab := crc32.MakeTable(crc32.Castagnoli)
	for range 20000 {
		b := bytes.Clone(img)
		for range 1 + r.Intn(3) {
			b[len(magic)+r.Intn(len(b)-len(magic)-4)] ^= byte(1 + r.Intn(255))
		}
		body := b[:len(b)-4]
		binary.LittleEndian.PutUint32(b[len(body):], crc32.Checksum(body, tab))
		_, _, _, _ = decode(b) // must not panic
	}
}
