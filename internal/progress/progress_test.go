package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// screen replays what a terminal shows for out: "\r\x1b[K" clears the
// current line, "\n" ends it. It returns the finished lines and the line
// still being drawn.
func screen(out string) (lines []string, current string) {
	for len(out) > 0 {
		switch {
		case strings.HasPrefix(out, "\r\x1b[K"):
			current, out = "", out[4:]
		case out[0] == '\n':
			lines, current, out = append(lines, current), "", out[1:]
		default:
			current, out = current+out[:1], out[1:]
		}
	}
	return lines, current
}

// clock is a fake time the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newBar(tty bool) (*Bar, *bytes.Buffer, *clock) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(1000, 0)}
	b := NewMode(&buf, "reindex", "docs", tty)
	b.now, b.start = c.now, c.now()
	return b, &buf, c
}

// TestTTY_LogsNeverShareTheBarsLine: on a terminal, log lines written
// through Writer end up on lines of their own, whole, and the bar is
// drawn again below them; the final screen is the logs and the finished
// bar.
func TestTTY_LogsNeverShareTheBarsLine(t *testing.T) {
	b, buf, c := newBar(true)
	log := b.Writer()
	b.Update(0, 400)
	for i := 1; i <= 4; i++ {
		c.advance(time.Second)
		b.Update(i*100, 400)
		log.Write([]byte("level=WARN msg=\"skipped an event\" n=" + string(rune('0'+i)) + "\n"))
		log.Write([]byte("level=INFO ")) // a line in two writes:
		b.Update(i*100+1, 400)           // no bar in its middle
		log.Write([]byte("msg=\"second half\"\n"))
	}
	b.Finish()
	lines, current := screen(buf.String())
	if current != "" {
		t.Fatalf("the screen ends mid-line: %q", current)
	}
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 8 log lines and the bar:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, l := range lines[:8] {
		if strings.Contains(l, "reindex") || !strings.HasPrefix(l, "level=") || (i%2 == 1 && l != `level=INFO msg="second half"`) {
			t.Fatalf("line %d is not a whole log line: %q", i, l)
		}
	}
	if want := "reindex [==============================] 401/400 docs (100%), 100/s"; lines[8] != want {
		t.Fatalf("last line %q, want %q", lines[8], want)
	}
}

// TestPlain_PeriodicLines: elsewhere there are no carriage returns, a
// line at most every interval, and the final state on Finish.
func TestPlain_PeriodicLines(t *testing.T) {
	b, buf, c := newBar(false)
	for i, step := range []struct {
		advance time.Duration
		done    int
	}{{0, 0}, {time.Second, 10}, {time.Second, 20}, {4 * time.Second, 30}, {time.Second, 40}} {
		c.advance(step.advance)
		b.Update(step.done, 50)
		_ = i
	}
	b.Writer().Write([]byte("level=WARN msg=x\n"))
	c.advance(time.Second)
	b.Update(50, 50)
	b.Finish()
	out := buf.String()
	if strings.ContainsAny(out, "\r\x1b") {
		t.Fatalf("control characters in plain output: %q", out)
	}
	want := []string{
		"reindex: 0/50 docs (0%)",
		"reindex: 30/50 docs (60%), 5/s",
		"level=WARN msg=x",
		"reindex: 50/50 docs (100%), 6/s",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnknownTotal(t *testing.T) {
	b, buf, c := newBar(false)
	c.advance(2 * time.Second)
	b.Update(84, -1)
	if got := buf.String(); got != "reindex: 84 docs, 42/s\n" {
		t.Fatalf("%q", got)
	}
}

// TestFinish_NothingShown: a job with nothing to do leaves no line.
func TestFinish_NothingShown(t *testing.T) {
	b, buf, _ := newBar(true)
	b.Finish()
	b.Update(5, 10)
	if buf.Len() != 0 {
		t.Fatalf("%q", buf.String())
	}
}

// TestPlain_FinalLineOnce: a job whose last Update was drawn (the
// first, or one past the interval) ends with that line, not a copy.
func TestPlain_FinalLineOnce(t *testing.T) {
	for _, unknown := range []bool{false, true} {
		b, buf, c := newBar(false)
		total := 20
		if unknown {
			total = -1
		}
		c.advance(time.Second)
		b.Update(20, total) // the first Update is drawn at once
		b.Finish()
		if lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); len(lines) != 1 {
			t.Errorf("total %d: %d lines for one state:\n%s", total, len(lines), buf.String())
		}
	}
	// a state not yet drawn is drawn by Finish
	b, buf, c := newBar(false)
	b.Update(5, 20)
	c.advance(time.Second)
	b.Update(20, 20)
	b.Finish()
	if got := buf.String(); !strings.HasSuffix(got, "reindex: 20/20 docs (100%), 20/s\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("final state:\n%s", got)
	}
}
