package mcpserver

import (
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The tool descriptions are what a model reads to decide when and how to
// call a tool: they say what the tool is for, what comes back, and the
// rules that would otherwise surprise it (tiers, who may forget).
const (
	searchDesc = `Search the shared long-term memory of this Snowclaw relay: memory items (facts, decisions, preferences, lessons, summaries), group chat and indexed files, as far as your identity may read them. ` +
		`Call it before answering anything that may depend on what was remembered earlier about people, projects, decisions or preferences. ` +
		`Ranking combines keywords (BM25) and meaning (vectors), weighted by the source's trust and the memory's confidence; results come best first. ` +
		`Parameters: q (required: the query; "query" is accepted as an alias), limit, kinds, explain, remote. ` +
		`The query is free text and may carry filters as key:value words: tier:public|group|private|internal, topic:<prefix> (or t:), group:<id>, source:<npub>, model:<glob>, since:YYYY-MM-DD, until:YYYY-MM-DD, min_confidence:0.8, include:superseded (replaced versions are hidden otherwise). ` +
		`Each result is lean: id, kind, text, tier, topic, group, source (npub), score (higher is better), created_at (unix seconds) and origin ("local" or the remote relay). ` +
		`Private memories are decrypted for the person they belong to; a memory your identity cannot decrypt has "encrypted": true and no text. Use memory_get with the id for a memory's detail, context and history.`
	listDesc = `List the memory items you may read, newest first, without a query. Filter by tier, topic prefix, source or group; page back with "until" (the created_at of the last item you got). ` +
		`Versions replaced by a newer one are left out unless include_superseded is true. Use memory_search to find memories by meaning; use this to browse or audit.`
	getDesc = `Fetch one memory item by its id (from memory_search or memory_list) with its version history: "history" holds the versions it replaced (newest first), "superseded_by" the memories that replace it. ` +
		`Use it for a memory's full detail and context, or to check whether it is still current.`
	storeDesc = `Remember something for later: stores one memory item on the relay, written by the relay's agent on your behalf. ` +
		`Put one self-contained statement (a fact, decision, preference or lesson) in "text" and supporting material in "detail". ` +
		`"topic" is a /-separated path that files the memory with related ones, e.g. user/<npub>/preferences, project/<name>/decisions, lesson/<slug>, fact/<domain>/<name>. ` +
		`Tiers: private (the default: encrypted, readable only by you and the agent), group (readable by the members of "group"; you must be one), public (everyone) and internal (the agent only); public and internal are for the relay's owner. ` +
		`Returns the stored memory with its id.`
	forgetDesc = `Permanently delete one memory item by its id: a hard delete on the relay that cannot be undone. ` +
		`Allowed to the person a private memory is about, its author, and the relay's owner. ` +
		`Use it when the user asks you to forget something or a memory is wrong (then store the corrected one).`
)

// tools are the five definitions, schemas included.
type tools struct {
	search, list, get, store, forget *mcp.Tool
}

// toolDefs builds the definitions once: schema inference is reflection,
// and the relay builds a server per request.
var toolDefs = sync.OnceValue(func() tools {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	tierEnum := []any{string(snowclaw.TierPublic), string(snowclaw.TierGroup), string(snowclaw.TierPrivate), string(snowclaw.TierInternal)}

	search := inputSchema[searchInput](map[string]string{
		"q":       "the query (required, here or as query): what to look for, in words, optionally with key:value filters (see the tool description)",
		"query":   "an alias of q for clients that name the query so; give one of the two",
		"limit":   "how many results at most (default 20; the relay caps it, 100 unless configured)",
		"kinds":   "only events of these Nostr kinds, e.g. [30078] for memory items only; default every indexed kind",
		"explain": "add each result's score breakdown (keyword rank, vector rank, trust, confidence)",
		"remote":  "also ask the remote relays this relay is configured to search (public memories of other relays, marked with their origin)",
	})
	search.Properties["limit"].Minimum = new(1.0)
	search.Properties["q"].MinLength = new(1)
	search.Properties["query"].MinLength = new(1)

	list := inputSchema[snowclaw.ListRequest](map[string]string{
		"tier":               "only this tier",
		"topic":              "only topics starting with this, e.g. project/snowclaw",
		"source":             "only memories from this source (npub or hex public key of the author)",
		"group":              "only memories of this group id",
		"until":              "only memories created before this unix time (for paging)",
		"limit":              "how many at most (default 50, max 500)",
		"include_superseded": "also list versions that a newer memory replaced",
	})
	list.Properties["tier"].Enum = tierEnum
	list.Properties["limit"].Minimum = new(1.0)
	list.Properties["limit"].Maximum = new(500.0)

	store := inputSchema[snowclaw.StoreRequest](map[string]string{
		"text":       "the memory itself: one self-contained statement",
		"detail":     "optional supporting detail, examples or reasoning",
		"topic":      "a /-separated path filing the memory, e.g. project/snowclaw/decisions",
		"tier":       "who may read it: private (default), group, public or internal",
		"group":      "the group id, for tier group",
		"confidence": "how sure you are, 0 to 1 (optional)",
	})
	// the text form only; the relay keeps t tags only on signed events
	// (a text memory's t tag is its topic's first segment), so offering
	// tags would invite a call that always fails
	delete(store.Properties, "event")
	delete(store.Properties, "tags")
	store.Required = []string{"text"}
	store.Properties["text"].MinLength = new(1)
	store.Properties["tier"].Enum = tierEnum
	store.Properties["confidence"].Minimum = new(0.0)
	store.Properties["confidence"].Maximum = new(1.0)

	id := inputSchema[idInput](map[string]string{
		"id": "the memory's event id: 64 hex digits, as memory_search or memory_list return it",
	})
	id.Properties["id"].Pattern = "^[0-9a-fA-F]{64}$"

	return tools{
		search: &mcp.Tool{Name: "memory_search", Title: "Search memory", Description: searchDesc, Annotations: readOnly,
			InputSchema: search, OutputSchema: outputSchema[searchOutput]()},
		list: &mcp.Tool{Name: "memory_list", Title: "List memories", Description: listDesc, Annotations: readOnly,
			InputSchema: list, OutputSchema: outputSchema[listOutput]()},
		get: &mcp.Tool{Name: "memory_get", Title: "Get a memory", Description: getDesc, Annotations: readOnly,
			InputSchema: id, OutputSchema: outputSchema[snowclaw.MemoryDetail]()},
		store: &mcp.Tool{Name: "memory_store", Title: "Remember", Description: storeDesc,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
			InputSchema: store, OutputSchema: outputSchema[storeOutput]()},
		forget: &mcp.Tool{Name: "memory_forget", Title: "Forget a memory", Description: forgetDesc,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
			InputSchema: id, OutputSchema: outputSchema[snowclaw.ForgetResponse]()},
	}
})

// eventSchema describes a nostr.Event as it is marshalled (go-nostr's
// struct has no json tags, so inference would name the fields ID, PubKey…).
var eventSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"id":         {Type: "string"},
		"pubkey":     {Type: "string"},
		"created_at": {Type: "integer"},
		"kind":       {Type: "integer"},
		"tags":       {Type: "array", Items: &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}},
		"content":    {Type: "string"},
		"sig":        {Type: "string"},
	},
}

var forOpts = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[nostr.Event](): eventSchema,
}}

// inputSchema infers T's schema and adds the property descriptions. The
// types are fixed, so inference cannot fail at run time; if it ever did,
// a schema naming just the described properties keeps the server usable
// (the handlers still check their input).
func inputSchema[T any](desc map[string]string) *jsonschema.Schema {
	s, err := jsonschema.For[T](forOpts)
	if err != nil {
		s = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		for name := range desc {
			s.Properties[name] = &jsonschema.Schema{}
		}
	}
	for name, d := range desc {
		if p := s.Properties[name]; p != nil {
			p.Description = d
		}
	}
	return s
}

func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](forOpts)
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	return s
}
