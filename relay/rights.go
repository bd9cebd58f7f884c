package relay

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/rights"
)

// openRights opens the audit trail and the erasure list in <data>/privacy
// and builds the rights service. The audit trail is a file of its own so
// that it survives a destroy, which removes events.
func (r *Relay) openRights() error {
	dir := filepath.Join(r.opts.DataDir, "privacy")
	audit, err := rights.OpenAudit(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		return fmt.Errorf("privacy audit: %w", err)
	}
	erased, err := rights.OpenErased(filepath.Join(dir, "erased"))
	if err != nil {
		audit.Close()
		return fmt.Errorf("privacy erasures: %w", err)
	}
	svc, err := rights.New(rights.Options{
		Store: r.store, Delete: r.Delete, Agent: r.agent,
		AgentSecret: r.opts.Keys.AgentSecret, Owner: r.ids.Owner,
		Audit: audit, Erased: erased, Logger: r.log,
		HasGroup: func(id string) bool { _, ok := r.groups.GroupInfo(id); return ok },
		IsMember: r.groups.IsMember,
	})
	if err != nil {
		audit.Close()
		return err
	}
	r.rights, r.audit = svc, audit
	return nil
}

// rejectErased keeps what a forget or destroy removed from coming back.
func (r *Relay) rejectErased(_ context.Context, evt *nostr.Event) error {
	if r.rights != nil && r.rights.Blocks(evt) {
		return snowclaw.Blocked("this event was erased at its subject's request and cannot be stored again")
	}
	return nil
}
