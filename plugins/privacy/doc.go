// Package privacy holds the building blocks of the privacy rights of seed
// 004 (GDPR access, erasure, rectification, restriction, portability) as
// the relay applies them to what the agent keeps about a person: an audit
// log of every privacy operation, the list of erased events the relay must
// refuse to store again, the selectors that say what a "forget" targets,
// the two-step confirmation that guards the irreversible operations, and
// the export document.
//
// Nothing here talks to the relay, the store or the agent: callers gather
// the events and memories, decide who may see them (DESIGN.md §3 applies to
// exports too), and use these pieces to record, confirm, select and render.
// The two files written here (audit log and erasure list) hold hashes and
// pubkeys, never the text of a memory or of a query, so that keeping them
// for accountability does not keep what the person asked to have removed.
package privacy
