package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// migrateBatch is how many events one write to the target carries.
const migrateBatch = 500

// runMigrate copies every event from one store to another:
//
//	snowclaw migrate --from badger:DIR --to postgres://…
//	snowclaw migrate --from postgres://… --to badger:DIR
//
// DIR is a data directory (its events/ is the store). The source is read
// page by page, newest first; the target is written in batches by the
// same rules as the relay (a replaceable address keeps its newest
// version). A target that already holds events is refused unless
// --force. At the end the events of every kind are counted on both
// sides: any difference is an error.
func runMigrate(ctx context.Context, args, _ []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "source store: badger:DIR (a data directory) or postgres://…")
	to := fs.String("to", "", "target store: badger:DIR or postgres://…")
	force := fs.Bool("force", false, "copy into a target that already holds events (nothing in it is removed)")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: snowclaw migrate --from badger:DIR|postgres://… --to badger:DIR|postgres://… [--force]")
		return errUsageShown
	}
	if *from == *to {
		return errors.New("migrate: --from and --to name the same store")
	}
	src, err := openMigrateStore(ctx, "--from", *from, false)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openMigrateStore(ctx, "--to", *to, true)
	if err != nil {
		return err
	}
	defer dst.Close()
	if !*force {
		nonEmpty := false
		if err := store.Each(ctx, dst, nostr.Filter{}, func(*nostr.Event) bool { nonEmpty = true; return false }); err != nil {
			return fmt.Errorf("migrate: reading the target: %w", err)
		}
		if nonEmpty {
			return fmt.Errorf("migrate: the target %s already holds events; nothing was copied (use --force to add to them: nothing in the target is removed)", describeStore(*to))
		}
	}
	before, _, err := countKinds(ctx, dst)
	if err != nil {
		return fmt.Errorf("migrate: counting the target: %w", err)
	}
	total, err := countAll(ctx, src)
	if err != nil {
		return fmt.Errorf("migrate: counting the source: %w", err)
	}
	bar := newCopyProgress(stderr, total)
	want, copied, err := copyEvents(ctx, src, dst, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("migrate: after %d events: %w", copied, err)
	}
	after, _, err := countKinds(ctx, dst)
	if err != nil {
		return fmt.Errorf("migrate: counting the target: %w", err)
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		// the target may hold more (with --force), never fewer
		if after[k] < want[k] || !*force && after[k] != want[k] || *force && after[k] < before[k] {
			diffs = append(diffs, fmt.Sprintf("kind %d: source %d, target %d", k, want[k], after[k]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("migrate: the counts differ after copying: %s", strings.Join(diffs, "; "))
	}
	fmt.Fprintf(stderr, "migrated %d events (%d kinds) from %s to %s; counts verified\n", copied, len(want), describeStore(*from), describeStore(*to))
	return nil
}

// openMigrateStore opens badger:DIR or a PostgreSQL URL.
func openMigrateStore(ctx context.Context, flagName, spec string, create bool) (*store.Exact, error) {
	var o node.StoreOptions
	dir := ""
	switch {
	case strings.HasPrefix(spec, "badger:"):
		dir = strings.TrimPrefix(spec, "badger:")
		if dir == "" {
			return nil, fmt.Errorf("migrate: %s badger: needs a data directory, e.g. badger:./snowclaw-data", flagName)
		}
		if !create {
			if _, err := os.Stat(dir + "/events"); err != nil {
				return nil, fmt.Errorf("migrate: %s %s: no event store there (%v)", flagName, spec, err)
			}
		}
		o.Backend = node.BackendBadger
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		o.Backend, o.PostgresURL = node.BackendPostgres, spec
	default:
		return nil, fmt.Errorf("migrate: %s %s: give badger:DIR or a postgres:// URL", flagName, describeStore(spec))
	}
	st, err := node.OpenStore(ctx, o, dir, store.PageSize, nil)
	if err != nil {
		if errors.Is(err, store.ErrStoreInUse) {
			return nil, fmt.Errorf("migrate: %s %s is in use: stop the relay first", flagName, spec)
		}
		return nil, fmt.Errorf("migrate: %s: %w", flagName, err)
	}
	return st, nil
}

// describeStore names a store spec without a password.
func describeStore(spec string) string {
	if strings.HasPrefix(spec, "badger:") {
		return spec
	}
	return postgres.Describe(spec)
}

// copyEvents copies every event of src into dst in batches. want counts,
// per kind, what dst must hold afterwards: every regular event, and one
// version per replaceable address (the newest, which is what dst keeps).
func copyEvents(ctx context.Context, src, dst *store.Exact, progress func(int)) (want map[int]int, copied int, err error) {
	want = map[int]int{}
	seen := map[string]bool{} // replaceable addresses already counted
	var batch []*nostr.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := writeBatch(ctx, dst, batch); err != nil {
			return err
		}
		copied += len(batch)
		progress(copied)
		batch = batch[:0]
		return nil
	}
	var werr error
	add := func(evt *nostr.Event) bool {
		if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
			d := ""
			if nostr.IsAddressableKind(evt.Kind) {
				d = evt.Tags.GetD()
			}
			a := snowclaw.Address(evt.Kind, evt.PubKey, d)
			if !seen[a] {
				seen[a] = true
				want[evt.Kind]++
			}
		} else {
			want[evt.Kind]++
		}
		batch = append(batch, evt)
		if len(batch) >= migrateBatch {
			werr = flush()
		}
		return werr == nil
	}
	// group state is a function of its events in the store's order:
	// they go first, in the source's order, so the new store numbers
	// them alike; everything else after, in any order
	err = store.EachInOrder(ctx, src, nostr.Filter{Kinds: snowclaw.GroupStateKinds}, func(evt *nostr.Event, _ int64) bool { return add(evt) })
	if err == nil && werr == nil {
		err = store.Each(ctx, src, nostr.Filter{}, func(evt *nostr.Event) bool {
			return snowclaw.IsGroupStateKind(evt.Kind) || add(evt)
		})
	}
	if err == nil {
		err = werr
	}
	if err == nil {
		err = flush()
	}
	return want, copied, err
}

// writeBatch writes evs to dst: in one transaction when dst is
// PostgreSQL, one by one otherwise. An event already there is no error.
func writeBatch(ctx context.Context, dst *store.Exact, evs []*nostr.Event) error {
	if pg, ok := dst.Unwrap().(*postgres.Store); ok {
		_, err := pg.Import(ctx, evs)
		return err
	}
	for _, evt := range evs {
		var err error
		if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
			err = dst.ReplaceEvent(ctx, evt)
		} else {
			err = dst.SaveEvent(ctx, evt)
		}
		if err != nil && !errors.Is(err, eventstore.ErrDupEvent) && !errors.Is(err, store.ErrNotNewer) {
			return fmt.Errorf("event %s: %w", evt.ID, err)
		}
	}
	return nil
}

// countKinds counts a store's events per kind, reading every one.
func countKinds(ctx context.Context, s eventstore.Store) (map[int]int, int, error) {
	out, n := map[int]int{}, 0
	err := store.Each(ctx, s, nostr.Filter{}, func(evt *nostr.Event) bool { out[evt.Kind]++; n++; return true })
	return out, n, err
}

func countAll(ctx context.Context, s eventstore.Store) (int, error) {
	_, n, err := countKinds(ctx, s)
	return n, err
}

// copyProgress shows "copied N/M events": redrawn on one line on a
// terminal, a line every few seconds otherwise (a log file, CI).
type copyProgress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	last  time.Time
}

func newCopyProgress(w io.Writer, total int) *copyProgress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			tty = fi.Mode()&os.ModeCharDevice != 0
		}
	}
	return &copyProgress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *copyProgress) update(done int) {
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if time.Since(p.last) < every && done < p.total {
		return
	}
	p.last = time.Now()
	rate := float64(done) / max(time.Since(p.start).Seconds(), 0.001)
	if !p.tty {
		fmt.Fprintf(p.w, "copied %d/%d events, %.0f/s\n", done, p.total, rate)
		return
	}
	width, filled := 30, 30
	if p.total > 0 {
		filled = min(done*width/p.total, width)
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d events, %.0f/s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, p.total, rate)
}

func (p *copyProgress) finish() {
	if p.tty && !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
}
