package rights

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
)

// Operations recorded in the audit log.
const (
	OpExport         = "export"
	OpForget         = "forget"
	OpRectify        = "rectify"
	OpFreeze         = "freeze"
	OpUnfreeze       = "unfreeze"
	OpDestroy        = "destroy"
	OpPromote        = "promote"
	OpForgetPreview  = "forget-preview"
	OpDestroyPreview = "destroy-preview"
)

// Channels a request can arrive through.
const (
	ViaDM   = "dm"
	ViaHTTP = "http"
	ViaCLI  = "cli"
)

// AuditRecord is one privacy operation. It says who asked, about whom, what
// kind of selection and which events were touched, and deliberately nothing
// of what those events said: the log outlives a destroy
// (docs/privacy.md#export-forget-and-destroy), so it must not keep the
// erased data.
type AuditRecord struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Actor    string    `json:"actor,omitempty"` // hex pubkey of whoever asked
	Via      string    `json:"via,omitempty"`   // ViaDM, ViaHTTP, ViaCLI
	Op       string    `json:"op"`
	Subject  string    `json:"subject"`            // hex pubkey of the person
	Selector string    `json:"selector,omitempty"` // Selector.Kind(), never the query
	Count    int       `json:"count"`
	IDs      []string  `json:"ids,omitempty"` // event ids or memory ids: hashes only
	Note     string    `json:"note,omitempty"`
}

// Audit is the append-only audit log, one JSON record per line. It is safe
// for concurrent use.
type Audit struct {
	mu      sync.Mutex
	file    Journal
	records []AuditRecord
}

// OpenAudit opens the log at path, creating it and its directories with
// owner-only permissions, and reads the records already in it. A torn last
// line (a crash in the middle of a write) is dropped; damage further up is
// an error.
func OpenAudit(path string) (*Audit, error) { return OpenAuditOn(FileJournal(path)) }

// OpenAuditOn opens the audit trail kept in j.
func OpenAuditOn(j Journal) (*Audit, error) {
	a := &Audit{}
	err := j.Open(func(line []byte) error {
		var r AuditRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.ID == "" || r.Op == "" {
			return errors.New("audit record without id or op")
		}
		a.mu.Lock()
		a.records = append(a.records, r)
		a.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a.mu.Lock()
	a.file = j
	a.mu.Unlock()
	return a, nil
}

// Append records r and returns it with ID (random) and Time (now) filled in
// when they were empty. It returns only after the record is on disk.
//
// Pubkeys may be given as npub or hex and are stored as hex. Because the
// log keeps no content, it refuses a Selector that is not a selector kind
// (a query text passed by mistake) and IDs that are not hex hashes.
func (a *Audit) Append(r AuditRecord) (AuditRecord, error) {
	if err := normalizeAudit(&r); err != nil {
		return AuditRecord{}, fmt.Errorf("audit: %w", err)
	}
	if r.ID == "" {
		r.ID = randomHex(16)
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	// UTC and no monotonic reading: the record read back after a restart
	// must equal the one returned now.
	r.Time = r.Time.UTC().Round(0)
	r.IDs = slices.Clone(r.IDs)
	line, err := json.Marshal(r)
	if err != nil {
		return AuditRecord{}, fmt.Errorf("audit: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file == nil {
		return AuditRecord{}, errors.New("audit: log is closed")
	}
	if err := a.file.Append(line); err != nil {
		return AuditRecord{}, fmt.Errorf("audit: %w", err)
	}
	a.records = append(a.records, r)
	return cloneAudit(r), nil
}

func normalizeAudit(r *AuditRecord) error {
	if r.Op == "" {
		return errors.New("record has no op")
	}
	subject, err := snowclaw.ParsePubkey(r.Subject)
	if err != nil {
		return fmt.Errorf("subject: %w", err)
	}
	r.Subject = subject
	if r.Actor != "" {
		if r.Actor, err = snowclaw.ParsePubkey(r.Actor); err != nil {
			return fmt.Errorf("actor: %w", err)
		}
	}
	if !validSelectorKind(r.Selector) {
		return fmt.Errorf("selector must be a selector kind (ids, topic, tags, before, query), not its text")
	}
	for _, id := range r.IDs {
		if !isHex(id) || len(id) > 64 {
			return fmt.Errorf("id %.12q… is not a hex id", id)
		}
	}
	return nil
}

// List returns the records about subject (npub or hex; "" for all), oldest
// first, as copies.
func (a *Audit) List(subject string) []AuditRecord {
	if subject != "" {
		if pk, err := snowclaw.ParsePubkey(subject); err == nil {
			subject = pk
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []AuditRecord
	for _, r := range a.records {
		if subject == "" || r.Subject == subject {
			out = append(out, cloneAudit(r))
		}
	}
	return out
}

// Close closes the file; later Appends fail.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file == nil {
		return nil
	}
	err := a.file.Close()
	a.file = nil
	return err
}

func cloneAudit(r AuditRecord) AuditRecord {
	r.IDs = slices.Clone(r.IDs)
	return r
}

// randomHex returns n random bytes as hex. crypto/rand does not fail on
// supported platforms (Go 1.24+ aborts the program instead), so there is no
// error to pass on.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
