package search

import "github.com/snowclaw/snowclaw/search/indexdir"

// ErrNeedsRebuild reports an on-disk index that cannot be used as it is: it
// is missing parts, damaged, or was built with another embedder or format.
// The index is derived from stored events, so the caller wipes it (Wipe),
// opens it again and calls Rebuild.
var ErrNeedsRebuild = indexdir.ErrNeedsRebuild

// The index's directory and its meta.json are search/indexdir's.
type indexMeta = indexdir.Meta

const metaFile = indexdir.MetaFile

// Wipe deletes the index files in dir (and nothing else there), so that
// Open starts afresh after ErrNeedsRebuild.
func Wipe(dir string) error { return indexdir.Wipe(dir) }
