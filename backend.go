package snowclaw

import "context"

// MemoryBackend is the memory as one reader sees it: the one interface the
// HTTP API, MCP (in-process for `snowclaw serve`, over HTTP for `snowclaw
// mcp`) and the CLI share. Every method obeys the relay's read and write
// rules for that reader (docs/access.md); errors carry a NIP-01 prefix
// ("invalid:", "restricted:", "blocked:", …; snowclaw.Reason).
type MemoryBackend interface {
	Search(ctx context.Context, req SearchRequest) (SearchResponse, error)
	List(ctx context.Context, req ListRequest) ([]MemoryView, error)
	Get(ctx context.Context, id string) (MemoryDetail, error)
	Store(ctx context.Context, req StoreRequest) (MemoryView, error)
	Forget(ctx context.Context, id string) (ForgetResponse, error)
}
