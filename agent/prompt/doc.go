// Package prompt turns what the agent knows into what a model sees: it
// sanitizes message text so secret keys never reach a buffer or a model
// (policies.KeyFilter), counts tokens (Counter), and assembles the chat messages for
// one turn in the order of docs/agent.md#context, trimmed to a token budget (Assemble).
//
// Everything here is pure: no I/O, no clocks, no access to the relay, so the
// agent can build a prompt on the turn path without touching disk.
package prompt
