package snowclaw

// Tags of a memory item beside its d tag (docs/events.md, "Memory
// items"); the markers that decide its tier are tier.go's, the group
// key's version groupseal.go's.
const (
	// TagTier is the tier the writer meant (["snow:tier", "group"]);
	// informative only: ReadEvent's Tier reads the markers.
	TagTier = "snow:tier"
	// TagSource names the agent a memory came from (npub or hex); trust
	// ranking weighs by it, and the signer stands in when it is missing.
	TagSource = "snow:source"
	// TagModel names the model that wrote it ("<provider>/<model>").
	TagModel = "snow:model"
	// TagConfidence is the writer's confidence, 0–1.
	TagConfidence = "snow:confidence"
	// TagVersion numbers a rewritten memory's versions from 1.
	TagVersion = "snow:version"
	// TagSupersedes names the event id of a version this one replaces.
	TagSupersedes = "snow:supersedes"
)

// Keys an agent's kind 0 profile may carry in its content beside NIP-01's,
// which list it in the agent directory (docs/events.md).
const (
	ProfileModel        = "snow:model"
	ProfileVersion      = "snow:version"
	ProfileCapabilities = "snow:capabilities"
	ProfileOperator     = "snow:operator"
)

// Tags of a workspace file chunk (d snowclaw:file:<path>#<chunk>), which
// the search index makes and serves, never stores.
const (
	TagPath  = "snow:path"  // the file, relative to the indexed directory
	TagChunk = "snow:chunk" // the chunk's number in the file, from 0
	TagHash  = "snow:hash"  // the SHA-256 of the file version it was cut from
)

// MemoryItemD is the d tag of the memory item with this topic.
func MemoryItemD(topic string) string { return PrefixMemoryItem + topic }
