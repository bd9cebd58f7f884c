// Package rights carries out each person's rights over their data
// (docs/privacy.md): access and export, forget by selector, restriction (freeze),
// destroy, rectify and promote, over the event store, the search index
// and the agent's RAM. The relay exposes it over HTTP (NIP-98), the agent
// over private messages, and the owner's CLI through the API.
//
// Its building blocks talk to nothing (audit.go, erased.go, selector.go,
// confirm.go, export*.go, lines.go, markdown.go): an audit log of every
// operation, the list of erased events the relay must refuse to store
// again, the selectors that say what a forget targets, the two-step
// confirmation that guards the irreversible operations, and the export
// document. The service (rights.go, collect.go, ops.go, change.go,
// commands.go) gathers the events and memories, decides who may see them
// (docs/access.md applies to exports too), and uses those pieces to record,
// confirm, select and render.
//
// The two files written here (audit log and erasure list) hold hashes and
// pubkeys, never the text of a memory or of a query, so that keeping them
// for accountability does not keep what the person asked to have removed.
package rights
