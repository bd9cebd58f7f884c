// Package progress shows how far a long command-line job has got
// (reindex, eval, migrate, compact) without tangling with the job's log
// lines. On a terminal it is one line on stderr, rewritten in place, and
// log lines written through Bar.Writer appear above it (the bar is
// cleared, the line written, the bar drawn again). Anywhere else (a
// file, a pipe, CI) it writes a plain line every few seconds, so logs
// stay readable and nothing is full of carriage returns.
//
// Usage:
//
//	bar := progress.New(os.Stderr, "reindex", "docs")
//	logger := slog.New(slog.NewTextHandler(bar.Writer(), nil))
//	for … { bar.Update(done, total) }   // total < 0: unknown
//	bar.Finish()
//
// Written by hand: the usual progress-bar libraries draw the bar but do
// not route a logger's lines around it, which is the part needed here.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Default intervals between two drawings.
const (
	TTYInterval   = 100 * time.Millisecond
	PlainInterval = 5 * time.Second
)

// Bar is one job's progress. Its methods are safe for concurrent use.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	label    string
	unit     string
	interval time.Duration
	now      func() time.Time
	start    time.Time
	last     time.Time // last drawing; zero: none yet
	done     int
	total    int
	drawn    [2]int // done and total when last drawn
	shown    bool   // a bar is on the current terminal line
	midline  bool   // a log line was begun and not ended
	finished bool
}

// New draws the progress of job label, counting unit ("docs",
// "questions"), on w: as one rewritten line when w is a terminal, as
// plain periodic lines otherwise.
func New(w io.Writer, label, unit string) *Bar { return NewMode(w, label, unit, IsTerminal(w)) }

// NewMode is New with the mode chosen by the caller (tests, or a
// --progress flag).
func NewMode(w io.Writer, label, unit string, tty bool) *Bar {
	b := &Bar{w: w, tty: tty, label: label, unit: unit, now: time.Now, total: -1}
	b.interval = PlainInterval
	if tty {
		b.interval = TTYInterval
	}
	b.start = b.now()
	return b
}

// SetInterval sets the least time between two drawings; 0 draws on every
// Update.
func (b *Bar) SetInterval(d time.Duration) {
	b.mu.Lock()
	b.interval = d
	b.mu.Unlock()
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Update records that done of total units are done (total < 0: not
// known) and draws the bar when the interval has passed.
func (b *Bar) Update(done, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done, b.total = done, total
	if b.finished || b.midline {
		return
	}
	if now := b.now(); b.last.IsZero() || now.Sub(b.last) >= b.interval {
		b.last = now
		b.draw()
	}
}

// Finish draws the final state and ends the bar's line; later Updates
// draw nothing. A plain line already saying the final count is not
// written again.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	if b.last.IsZero() && b.done == 0 {
		return // nothing was ever shown or done
	}
	if !b.tty && !b.last.IsZero() && b.drawn == [2]int{b.done, b.total} {
		return
	}
	b.draw()
	if b.tty {
		io.WriteString(b.w, "\n")
		b.shown = false
	}
}

// Writer returns a writer for log lines: on a terminal each write clears
// the bar first and draws it again once the line is complete, so a log
// line never shares a line with the bar.
func (b *Bar) Writer() io.Writer { return logWriter{b} }

type logWriter struct{ b *Bar }

func (l logWriter) Write(p []byte) (int, error) {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty && b.shown {
		io.WriteString(b.w, "\r\x1b[K") // back to the start, clear the line
		b.shown = false
	}
	n, err := b.w.Write(p)
	if len(p) > 0 {
		b.midline = p[len(p)-1] != '\n'
	}
	if b.tty && !b.midline && !b.finished && !b.last.IsZero() {
		b.draw()
	}
	return n, err
}

// draw writes the current state; b.mu is held.
func (b *Bar) draw() {
	b.drawn = [2]int{b.done, b.total}
	line := b.text()
	if b.tty {
		io.WriteString(b.w, "\r\x1b[K"+line)
		b.shown = true
		return
	}
	io.WriteString(b.w, line+"\n")
}

// text is "label [=====>     ] 120/400 docs (30%), 85/s" on a terminal
// and the same without the bar elsewhere; with no total, "label: 120
// docs, 85/s".
func (b *Bar) text() string {
	secs := b.now().Sub(b.start).Seconds()
	rate := ""
	if secs > 0 {
		rate = fmt.Sprintf(", %.0f/s", float64(b.done)/secs)
	}
	if b.total <= 0 {
		return fmt.Sprintf("%s: %d %s%s", b.label, b.done, b.unit, rate)
	}
	done := min(b.done, b.total)
	pct := done * 100 / b.total
	if !b.tty {
		return fmt.Sprintf("%s: %d/%d %s (%d%%)%s", b.label, b.done, b.total, b.unit, pct, rate)
	}
	const width = 30
	filled := done * width / b.total
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if filled < width {
		bar = strings.Repeat("=", filled) + ">" + strings.Repeat(" ", width-filled-1)
	}
	return fmt.Sprintf("%s [%s] %d/%d %s (%d%%)%s", b.label, bar, b.done, b.total, b.unit, pct, rate)
}
