package memsearch

import (
	"context"

	"github.com/snowclaw/snowclaw/plugins/workspace"
)

// initWorkspace builds the workspace files when paths are indexed (a bad
// option is an error at Open) and puts them over the plugin's store and
// read rule, so that Query serves their chunks like stored events. They
// are started with the index (becomeReady) and scanned again after a
// rebuild.
func (p *Plugin) initWorkspace() error {
	o := p.opts
	if len(o.IndexedPaths) == 0 {
		return nil
	}
	files, err := workspace.New(workspace.Options{
		Dir:         o.FilesDir,
		Paths:       o.IndexedPaths,
		Interval:    o.IndexInterval,
		OwnerPubkey: o.OwnerPubkey,
		AgentSecret: o.AgentSecret,
		IndexDir:    o.Search.Dir,
		Logger:      p.log,
	})
	if err != nil {
		return err
	}
	p.files = files
	p.opts.Store = files.Store(o.Store)
	p.opts.CanRead = files.ReadRule(o.CanRead)
	return nil
}

// ScanFiles brings the index up to date with the workspace files
// (workspace.Files.Scan). It does nothing when no paths are indexed; the
// plugin scans at Open and every IndexInterval, and the agent may call it
// too.
func (p *Plugin) ScanFiles(ctx context.Context) (workspace.Scan, error) {
	if p.files == nil {
		return workspace.Scan{}, nil
	}
	return p.files.Scan(ctx)
}
