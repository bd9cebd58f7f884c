package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open is a store on url (a fresh database when url is "").
func open(t testing.TB, url string) *postgres.Store {
	t.Helper()
	if url == "" {
		url = pgtest.New(t)
	}
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxLimit: store.PageSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func newKey() string {
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return pk
}

// ev is an event with its id; the store checks no signature.
func ev(pk string, kind int, at nostr.Timestamp, tags nostr.Tags, content string) *nostr.Event {
	if tags == nil {
		tags = nostr.Tags{}
	}
	e := &nostr.Event{PubKey: pk, Kind: kind, CreatedAt: at, Tags: tags, Content: content, Sig: strings.Repeat("0", 128)}
	e.ID = e.GetID()
	return e
}

func save(t testing.TB, s *postgres.Store, e *nostr.Event) *nostr.Event {
	t.Helper()
	if err := s.SaveEvent(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

func query(t testing.TB, s *postgres.Store, f nostr.Filter) []*nostr.Event {
	t.Helper()
	ch, err := s.QueryEvents(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nostr.Event
	for e := range ch {
		out = append(out, e)
	}
	return out
}

func contents(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Content
	}
	return out
}

// dial is a connection of the test's own to url, closed when it ends.
func dial(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
