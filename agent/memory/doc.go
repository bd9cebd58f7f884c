// Package memory holds what the agent remembers, in RAM, and the kind 30078
// event form of each record (docs/events.md, docs/design.md; seeds 000, 002, 003).
//
// The Store is the turn-time source of truth: reads never touch disk or the
// relay. Every change marks its record dirty; a flusher elsewhere takes the
// dirty keys, encodes the records with a Codec, signs and publishes them, and
// turns Removed keys into NIP-09 deletions. At start the agent decodes its
// stored events and Loads them back. The package neither signs nor publishes,
// so it stays testable without a relay.
//
// Four record kinds live here:
//   - Npub: the agent's record of one person (seed 000 §1), stored private:
//     NIP-44 between the agent and that person, so the person can read it.
//   - Group: the agent's record of one group (seed 000 §2), plain, h-tagged.
//   - Item: a long-term memory (seed 002 item, seed 003 event), in the tier
//     the conversation it came from allows.
//   - Lesson: a self-improvement lesson (seed 002), internal to the agent.
//
// The per-group conversation Ring lives here too; it is never persisted.
package memory
