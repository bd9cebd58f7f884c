// Package memory holds what the agent remembers, in RAM, and the kind 30078
// event form of each record (docs/events.md, docs/agent.md).
//
// The Store is the turn-time source of truth: reads never touch disk or the
// relay. Every change marks its record dirty; a flusher elsewhere takes the
// dirty keys, encodes the records with a Codec, signs and publishes them, and
// turns Removed keys into NIP-09 deletions. At start the agent decodes its
// stored events and Loads them back. The package neither signs nor publishes,
// so it stays testable without a relay.
//
// Four record kinds live here:
//   - Npub: the agent's record of one person, stored private:
//     NIP-44 between the agent and that person, so the person can read it.
//   - Group: the agent's record of one group, plain, h-tagged.
//   - Item: a long-term memory (a snow:memory:<topic> event), in the tier
//     the conversation it came from allows.
//   - Lesson: a self-improvement lesson, internal to the agent.
//
// The per-group conversation Ring lives here too; it is never persisted.
package memory
