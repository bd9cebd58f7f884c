// Package agent is the resident agent (docs/design.md "The agent"): a subscriber inside
// the relay process that is fed every stored and ephemeral event through a
// bounded queue, keeps per-person and per-group memory, ring buffers and
// dynamic config in RAM, assembles the LLM context, replies when its
// respond mode says so, and writes what it learns back as kind 30078
// events through the relay's own write path.
//
// The agent knows nothing of the relay or the search index: the relay
// hands it functions (Publish, Query, Recall) in Options. Its parts live
// in subpackages: memory (records and their event form), prompt (sanitizer
// and context assembly), dynconfig (owner-signed config), llm (the model),
// privmsg (NIP-17 private messages) and learn (what it learns, from being
// told and from conversation, and consolidation), which the agent hosts
// (learning.go).
package agent
