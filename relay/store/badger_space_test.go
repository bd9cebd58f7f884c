package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testdisk"
)

// TestBadger_CloseOnAFullDiskLeavesTheLog: badger flushes its memtable
// through mmap as it closes; with the volume filled past the reserve by
// someone else that flush would be SIGBUS. The store is left with its
// write-ahead log instead, and the events are all there when it is
// opened again with room.
func TestBadger_CloseOnAFullDiskLeavesTheLog(t *testing.T) {
	disk := testdisk.Small(t, 64)
	dir := filepath.Join(disk, "events")
	s, err := OpenBadger(dir, 500, BadgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	var ids []string
	for i := range 200 {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Timestamp(1700000000 + i), Content: string(make([]byte, 4000)), Tags: nostr.Tags{}}
		evt.Sign(sk)
		if err := s.SaveEvent(context.Background(), &evt); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, evt.ID)
	}
	fill := testdisk.Fill(t, disk, 0)
	s.Close() // SIGBUS here ends the test binary
	fill.Remove()

	// the store left open holds its directory's lock, as a process that
	// died would not: a copy of its files is what the next start reads
	if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) == 0 {
		t.Fatal("no write-ahead log left to replay")
	}
	copied := filepath.Join(t.TempDir(), "events")
	if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBadger(copied, 500, BadgerOptions{MinFreeMB: BadgerMinFree.MB()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := All(context.Background(), s, nostr.Filter{IDs: ids})
	if err != nil || len(got) != len(ids) {
		t.Fatalf("%d of %d events after a close on a full disk (%v)", len(got), len(ids), err)
	}
}
