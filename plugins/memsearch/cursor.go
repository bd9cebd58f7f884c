package memsearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Over a shared store every instance keeps its own index, fed by its
// relay's hooks, which see the other instances' changes through the
// store's change log (relay/follow.go). The index records how far into
// that log it is current, in a small file beside it, so that a restart
// applies what it missed — deletions above all, which no scan of the
// store can show — change by change instead of rebuilding. Without the
// file, or when the log has been pruned past it, the index is rebuilt.

const positionFile = "feed-position"

// errCaughtUp ends a replay at the head it was asked to reach.
var errCaughtUp = errors.New("caught up")

// position is the change log entry the relay has applied (its hooks ran,
// so their updates are in the queue).
func (p *Plugin) position() int64 {
	if p.opts.Position == nil {
		return 0
	}
	return p.opts.Position()
}

// readPosition is the recorded position; ok is false when there is none.
func (p *Plugin) readPosition() (int64, bool) {
	b, err := os.ReadFile(filepath.Join(p.opts.Search.Dir, positionFile))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n >= 0
}

// notePosition records pos once the updates up to it are applied: at most
// once a second, unless final.
func (p *Plugin) notePosition(pos int64, final bool) {
	if p.opts.Feed == nil {
		return
	}
	p.posMu.Lock()
	defer p.posMu.Unlock()
	if pos <= p.savedPos || !final && time.Since(p.savedAt) < time.Second {
		return
	}
	if err := writePosition(p.opts.Search.Dir, pos); err != nil {
		p.log.Warn("recording the index's change log position", "err", err)
		return
	}
	p.savedPos, p.savedAt = pos, time.Now()
}

// writePosition replaces the file whole (a crash leaves the old one).
func writePosition(dir string, pos int64) error {
	tmp := filepath.Join(dir, positionFile+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(pos, 10)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, positionFile))
}

// replay applies the change log from the recorded position to its head.
// It reports false, with no error, when the index must be rebuilt
// instead.
func (p *Plugin) replay(ctx context.Context) (bool, error) {
	feed := p.opts.Feed
	from, ok := p.readPosition()
	if !ok {
		p.log.Warn("the index records no position in the shared store's change log: rebuilding it")
		return false, nil
	}
	head, err := feed.Head(ctx)
	if err != nil {
		return false, fmt.Errorf("reading the change log: %w", err)
	}
	if head > from {
		// applied here, in the log's order, before anything the relay's
		// hooks queued while the index loaded (load.go)
		n := 0
		var ops []op
		apply := func() {
			p.q.applyMu.Lock()
			p.applyOps(ctx, ops)
			p.q.applyMu.Unlock()
			ops = ops[:0]
		}
		err = feed.Follow(ctx, from, func(c store.Change) error {
			switch c.Op {
			case store.Saved:
				if c.Event == nil {
					break // removed since: its deletion's entry follows
				}
				if doc, ok := p.docOf(snowclaw.ReadEvent(c.Event)); ok {
					ops = append(ops, op{doc: &doc})
				}
			case store.Deleted:
				ops = append(ops, op{remove: []string{c.Event.ID}})
			}
			if n++; len(ops) >= batchMax {
				apply()
			}
			if c.Seq >= head {
				return errCaughtUp
			}
			return nil
		})
		switch {
		case errors.Is(err, store.ErrFeedTruncated):
			p.log.Warn("the change log was pruned past the index's position: rebuilding it", "position", from)
			return false, nil
		case !errors.Is(err, errCaughtUp):
			return false, fmt.Errorf("replaying the change log: %w", err)
		}
		apply()
		p.log.Info("search index caught up with the change log", "changes", n, "from", from, "to", head)
	}
	p.notePosition(head, true)
	return true, nil
}

// markRebuilt records the position a rebuild from the store started at:
// everything up to it is in the index.
func (p *Plugin) markRebuilt(head int64) {
	p.notePosition(head, true)
}

// feedHead is the change log's head, 0 without a shared store.
func (p *Plugin) feedHead(ctx context.Context) (int64, error) {
	if p.opts.Feed == nil {
		return 0, nil
	}
	return p.opts.Feed.Head(ctx)
}
