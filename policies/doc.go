// Package policies holds the relay's decisions about who may write what and
// who may read what, as small functions the node appends to the relay's
// hook slices (relay.Hooks), so the order of the checks is written down in
// one place (cmd/snowclaw/internal/node's wire) and the relay knows no
// rule. Decisions are pure: the state they need (group membership, the relay's
// identities) comes in through the GroupView interface and Identities, so
// every rule can be table-tested without a running relay. The secret
// sanitizer (KeyFilter) lives here too: the agent and the search index both
// apply it before text is kept, indexed or shown to a model.
//
// Every refusal message starts with a NIP-01 prefix (invalid:, blocked:,
// restricted:, auth-required:, rate-limited:, duplicate:, error:) and
// says what the sender can do about it.
package policies
