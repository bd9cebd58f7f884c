package postgres_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// A URL that cannot work stops Open with a message naming the server and
// database, never the password.
func TestOpen_BadURLs(t *testing.T) {
	good := pgtest.New(t)
	// a port nobody listens on
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(closed)
	noDB := strings.Replace(good, "/t_", "/missing_", 1)
	for _, c := range []struct{ url, names string }{
		{"postgres://snow:s3cret@" + closed + "/relay", "postgres://snow@" + closed + "/relay"},
		{"not a url at all", "unparsable"},
		{"postgres://snow:s3cret@[::1/x", "postgres://snow@[::1/x"},
		{strings.Replace(noDB, "postgres://postgres@", "postgres://postgres:s3cret@", 1), "/missing_"},
		{"mysql://snow:s3cret@" + closed + "/relay", "mysql://snow@"},
		{"host=127.0.0.1 port=" + port + " user=snow password=s3cret dbname=relay", "postgres://snow@127.0.0.1:" + port + "/relay"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		s, err := postgres.Open(ctx, c.url, postgres.Options{})
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", c.url)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, postgres.ErrOpen) || !strings.HasPrefix(msg, "postgres store at ") || !strings.Contains(msg, c.names) || strings.Contains(msg, "s3cret") {
			t.Errorf("%s: error %q; want ErrOpen naming %q without the password", c.url, msg, c.names)
		}
	}
}

// Instances starting together migrate once (the advisory lock), a
// restart finds the schema current, and a schema newer than the binary
// is refused with a message saying so.
func TestOpen_Migrations(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			s, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	open(t, url).Close() // again: nothing to do
	c := dial(t, url)
	var versions, top int
	if err := c.QueryRow(ctx, "SELECT count(*), max(version) FROM snowclaw_schema").Scan(&versions, &top); err != nil {
		t.Fatal(err)
	}
	if versions != postgres.SchemaVersion() || top != postgres.SchemaVersion() {
		t.Fatalf("schema table: %d rows up to %d, want %d", versions, top, postgres.SchemaVersion())
	}
	if _, err := c.Exec(ctx, "INSERT INTO snowclaw_schema (version) VALUES ($1)", postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, url, postgres.Options{})
	if !errors.Is(err, postgres.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade snowclaw") {
		t.Fatalf("newer schema: %v, want ErrSchemaTooNew asking for an upgrade", err)
	}
}
