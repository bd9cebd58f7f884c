package rights

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAudit_AppendListReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "priv", "deep")
	path := filepath.Join(dir, "audit.jsonl")
	_, alice, aliceNpub := newKey(t)
	_, bob, _ := newKey(t)

	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	in := []AuditRecord{
		{Actor: alice, Via: ViaDM, Op: OpForget, Subject: aliceNpub, Selector: SelectTopic, Count: 2, IDs: []string{fakeID("a"), fakeID("b")}},
		{Actor: bob, Via: ViaHTTP, Op: OpExport, Subject: bob, Time: at},
		{Via: ViaCLI, Op: OpDestroy, Subject: alice, Count: 7, Note: "owner request"},
	}
	var out []AuditRecord
	for _, r := range in {
		got, err := a.Append(r)
		if err != nil {
			t.Fatalf("Append(%+v): %v", r, err)
		}
		if len(got.ID) != 32 || !isHex(got.ID) {
			t.Errorf("ID = %q, want 32 hex", got.ID)
		}
		if got.Time.IsZero() {
			t.Errorf("Time not filled")
		}
		out = append(out, got)
	}
	if out[0].Subject != alice {
		t.Errorf("npub subject stored as %q, want hex %q", out[0].Subject, alice)
	}
	if !out[1].Time.Equal(at) {
		t.Errorf("given Time replaced: %v", out[1].Time)
	}

	tests := []struct {
		name    string
		subject string
		want    []AuditRecord
	}{
		{"all", "", out},
		{"alice by hex", alice, []AuditRecord{out[0], out[2]}},
		{"alice by npub", aliceNpub, []AuditRecord{out[0], out[2]}},
		{"bob", bob, []AuditRecord{out[1]}},
		{"nobody", strings.Repeat("0", 64), nil},
	}
	check := func(a *Audit) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if got := a.List(tc.subject); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("List(%q) =\n%+v\nwant\n%+v", tc.subject, got, tc.want)
				}
			})
		}
	}
	check(a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(in[0]); err == nil {
		t.Error("Append after Close succeeded")
	}

	a2, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	check(a2)

	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
}

func TestAudit_TornLastLine(t *testing.T) {
	_, alice, _ := newKey(t)
	tests := []struct {
		name string
		tail string
	}{
		{"partial json", `{"id":"abc","time":"2026-`},
		{"zeros", "\x00\x00\x00\x00\x00\x00"},
		{"garbage with newline", "{not json}\n"},
		{"partial then blank", "{\"id\":\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			a, err := OpenAudit(path)
			if err != nil {
				t.Fatal(err)
			}
			first, err := a.Append(AuditRecord{Op: OpExport, Subject: alice})
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
			appendRaw(t, path, tc.tail)

			a, err = OpenAudit(path)
			if err != nil {
				t.Fatalf("reopen with torn tail: %v", err)
			}
			if got := a.List(""); len(got) != 1 || got[0].ID != first.ID {
				t.Fatalf("after torn tail List = %+v, want only the first record", got)
			}
			second, err := a.Append(AuditRecord{Op: OpForget, Subject: alice, Selector: SelectIDs})
			if err != nil {
				t.Fatal(err)
			}
			a.Close()

			// The next record must start on a clean line, not be glued to
			// the remains of the torn one.
			a, err = OpenAudit(path)
			if err != nil {
				t.Fatalf("reopen after append: %v", err)
			}
			defer a.Close()
			got := a.List(alice)
			if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID {
				t.Errorf("List = %+v, want first and second", got)
			}
		})
	}
}

func TestAudit_CorruptMiddleLineIsAnError(t *testing.T) {
	_, alice, _ := newKey(t)
	good := `{"id":"ff","time":"2026-01-01T00:00:00Z","op":"export","subject":"` + alice + `","count":0}` + "\n"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(good+"{broken\n"+good), 0o600); err != nil {
		t.Fatal(err)
	}
	// A bad line with records after it is not a torn write: dropping it
	// silently would lose an audit record.
	if a, err := OpenAudit(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("OpenAudit with a corrupt middle line: err = %v, want a line 2 error", err)
		if a != nil {
			a.Close()
		}
	}
}

func TestAudit_RefusesContent(t *testing.T) {
	_, alice, _ := newKey(t)
	a, err := OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tests := []struct {
		name    string
		r       AuditRecord
		wantErr bool
	}{
		{"valid", AuditRecord{Op: OpForget, Subject: alice, Selector: SelectQuery, IDs: []string{fakeID("x")}}, false},
		{"short memory id", AuditRecord{Op: OpForget, Subject: alice, IDs: []string{"0a1b2c3d4e5f"}}, false},
		{"query text as selector", AuditRecord{Op: OpForget, Subject: alice, Selector: "my divorce"}, true},
		{"content as id", AuditRecord{Op: OpForget, Subject: alice, IDs: []string{"likes tea"}}, true},
		{"no op", AuditRecord{Subject: alice}, true},
		{"no subject", AuditRecord{Op: OpExport}, true},
		{"bad actor", AuditRecord{Op: OpExport, Subject: alice, Actor: "bob"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Append(tc.r)
			if (err != nil) != tc.wantErr {
				t.Errorf("Append err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
	if n := len(a.List("")); n != 2 {
		t.Errorf("%d records stored, want only the 2 valid ones", n)
	}
}

func TestAudit_ConcurrentAppends(t *testing.T) {
	_, alice, _ := newKey(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := a.Append(AuditRecord{Op: OpExport, Subject: alice, Note: fmt.Sprint(w, i)}); err != nil {
					t.Error(err)
				}
				a.List(alice)
			}
		}()
	}
	wg.Wait()
	a.Close()
	a, err = OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got := a.List("")
	seen := map[string]bool{}
	for _, r := range got {
		seen[r.ID] = true
	}
	if len(got) != workers*each || len(seen) != workers*each {
		t.Errorf("reopened %d records with %d distinct ids, want %d", len(got), len(seen), workers*each)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
