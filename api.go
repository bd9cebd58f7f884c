package snowclaw

import "github.com/nbd-wtf/go-nostr"

// The types below are the JSON contract of the HTTP API (/api/v1, see
// docs/api.md), of the MCP tools and of the web UI. They live here so the
// relay, the MCP server and the CLI agree on one shape without importing
// each other.

// MemoryView is one memory item as a reader sees it: the event's markers
// decoded, and the text decrypted when the reader may read it.
type MemoryView struct {
	ID      string   `json:"id"`     // event id
	Pubkey  string   `json:"pubkey"` // hex author of the event
	Topic   string   `json:"topic"`  // d tag after "snow:memory:"
	Tier    Tier     `json:"tier"`
	Group   string   `json:"group,omitempty"`
	Person  string   `json:"person,omitempty"` // hex p tag of a private memory
	Text    string   `json:"text"`             // summary; "" when the reader cannot decrypt it
	Detail  string   `json:"detail,omitempty"`
	Context string   `json:"context,omitempty"`
	Tags    []string `json:"tags,omitempty"`   // t tags
	Source  string   `json:"source,omitempty"` // snow:source (npub), else the author's npub
	// LearntFrom is the npub of the person the memory was learnt from
	// (snow:learnt-from), when it names one.
	LearntFrom string   `json:"learnt_from,omitempty"`
	Model      string   `json:"model,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	Version    int      `json:"version,omitempty"`
	Supersedes []string `json:"supersedes,omitempty"`
	// SupersededBy names the memories that replace this one, as far as the
	// reader may see them; a superseded memory is history, not current.
	SupersededBy []string `json:"superseded_by,omitempty"`
	// Encrypted: the text is withheld from this reader (stored NIP-44
	// encrypted and not theirs to read). A private memory shown to its own
	// person has its text and Encrypted false; its Tier still says private.
	Encrypted bool            `json:"encrypted,omitempty"`
	CreatedAt nostr.Timestamp `json:"created_at"`
}

// SearchRequest is a NIP-50 search as the API and MCP take it. Query may
// carry the extensions of docs/design.md "Search" (tier:, t:, group:, …).
type SearchRequest struct {
	Query   string `json:"q"`
	Limit   int    `json:"limit,omitempty"`
	Kinds   []int  `json:"kinds,omitempty"` // default: every kind the index holds
	Explain bool   `json:"explain,omitempty"`
	// Remote asks the remote relays of [memory.remote] too, as
	// include:remote in Query does.
	Remote bool `json:"remote,omitempty"`
}

// SearchHit is one ranked result. Memory is set for memory items; Event
// is the stored event as the relay would send it.
type SearchHit struct {
	Event   *nostr.Event `json:"event"`
	Memory  *MemoryView  `json:"memory,omitempty"`
	Explain any          `json:"explain,omitempty"` // score breakdown when asked
	// Origin is where the hit came from in a search that asked remote
	// relays too (include:remote): "local" for this relay, else the
	// remote relay's URL. Absent in a search of this relay only. A remote
	// hit is another relay's public event, never stored here.
	Origin string `json:"origin,omitempty"`
}

// OriginLocal is SearchHit.Origin of this relay's hits.
const OriginLocal = "local"

// SearchResponse lists hits in descending relevance.
type SearchResponse struct {
	Query   string      `json:"q"`
	Results []SearchHit `json:"results"`
}

// ListRequest filters a memory listing. Empty fields do not filter.
type ListRequest struct {
	Tier   Tier   `json:"tier,omitempty"`
	Topic  string `json:"topic,omitempty"` // prefix of the topic
	Source string `json:"source,omitempty"`
	Group  string `json:"group,omitempty"`
	Until  int64  `json:"until,omitempty"` // unix seconds, for paging
	Limit  int    `json:"limit,omitempty"` // default 50, max 500
	// IncludeSuperseded lists old versions too.
	IncludeSuperseded bool `json:"include_superseded,omitempty"`
}

// MemoryDetail is one memory with its version history: the versions it
// supersedes, transitively, newest first, and those that supersede it.
type MemoryDetail struct {
	Memory       MemoryView   `json:"memory"`
	Event        *nostr.Event `json:"event"`
	History      []MemoryView `json:"history,omitempty"`
	SupersededBy []MemoryView `json:"superseded_by,omitempty"`
}

// StoreRequest stores a memory. With Event set it is a signed kind 30078
// event published through the relay's write rules as is; otherwise the
// agent writes the memory on the caller's behalf (private: encrypted
// between agent and caller; group: the caller must be a member; public and
// internal: the owner only).
type StoreRequest struct {
	Event      *nostr.Event `json:"event,omitempty"`
	Text       string       `json:"text,omitempty"`
	Detail     string       `json:"detail,omitempty"`
	Topic      string       `json:"topic,omitempty"`
	Tier       Tier         `json:"tier,omitempty"` // default private
	Group      string       `json:"group,omitempty"`
	Tags       []string     `json:"tags,omitempty"`
	Confidence float64      `json:"confidence,omitempty"`
}

// ForgetResponse says how many events a forget removed.
type ForgetResponse struct {
	Deleted int    `json:"deleted"`
	Message string `json:"message"`
}
