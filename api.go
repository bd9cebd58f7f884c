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
	Explain *ExplainRow  `json:"explain,omitempty"` // score breakdown when asked
	// Origin is where the hit came from in a search that asked remote
	// relays too (include:remote): "local" for this relay, else the
	// remote relay's URL. Absent in a search of this relay only. A remote
	// hit is another relay's public event, never stored here.
	Origin string `json:"origin,omitempty"`
}

// ExplainRow is one result's score breakdown, for a search with
// explain:true (a NOTICE on the websocket, SearchHit.Explain in the API).
type ExplainRow struct {
	ID string `json:"id"`
	Explain
	// ConflictsWith lists current memories on the same topic from other
	// sources that say something else (docs/search.md), and the version this
	// one replaced when the two were learnt from different people, as far
	// as the reader may see them.
	ConflictsWith []string `json:"conflicts_with,omitempty"`
	// Origin is "local" or a remote relay's URL in a search that asked
	// remote relays too (include:remote); RemoteTrust is the remote's
	// trust weight, already multiplied into Final.
	Origin      string  `json:"origin,omitempty"`
	RemoteTrust float64 `json:"remote_trust,omitempty"`
}

// Explain is the ranking's score breakdown of one result (search.Result).
type Explain struct {
	BM25Rank    int     `json:"bm25_rank"`    // 1-based, 0 = not in the BM25 list
	BM25Score   float64 `json:"bm25_score"`   //
	VectorRank  int     `json:"vector_rank"`  // 1-based, 0 = not in the vector list
	VectorScore float64 `json:"vector_score"` // cosine similarity
	Fused       float64 `json:"fused"`        // reciprocal rank fusion score
	Trust       float64 `json:"trust"`        // source × model tier factor
	Confidence  float64 `json:"confidence"`   // factor from snow:confidence
	Recency     float64 `json:"recency"`      // factor from recency decay
	Length      float64 `json:"length"`       // factor from the message-length prior
	Date        float64 `json:"date"`         // factor from a month the query names (search/querydate)
	Speaker     float64 `json:"speaker"`      // factor from a speaker the query names (search/speaker)
	Final       float64 `json:"final"`
	// Floor is the relevance floor the result passed: bm25, vector
	// (vector_score ≥ vector_floor), both, or context (a thread neighbour
	// of a message that passed); see search/floor.go.
	Floor       string  `json:"floor"`
	VectorFloor float64 `json:"vector_floor"` // the index's calibrated vector floor
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
