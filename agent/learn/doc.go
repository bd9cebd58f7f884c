// Package learn is the agent's learning (docs/agent.md#what-the-agent-learns-from-conversation):
// it reads each quiet conversation's new messages in one model call
// (agent/extract), places every candidate in the tier of the conversation
// it came from, meets it with the similar memories of that scope (add, a
// new version, or nothing; beside another author's memory it contradicts),
// files what it learns about people and groups in their records, and
// consolidates: duplicates merged, per-scope caps archived, weekly
// summaries.
//
// It writes only into the agent's records in RAM (agent/memory). What it
// needs besides is its Host, the agent that runs it: persistence, recall,
// the rule of what a reply may quote, the conversation buffers and the
// agent's private messages.
package learn
