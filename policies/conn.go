package policies

import "context"

// Conn describes the client connection a hook is running for. The relay's
// websocket layer puts it in the context; events the relay makes itself
// carry none.
type Conn struct {
	IP string
	// Reader returns the pubkey authenticated with NIP-42 so far, or "".
	// It is a function because auth may happen after the context is made.
	Reader func() string
}

type connKey struct{}

// WithConn returns ctx carrying the connection c.
func WithConn(ctx context.Context, c *Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ConnFrom returns the connection in ctx, or nil for internal calls.
func ConnFrom(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// ClientIP is the address of the connection in ctx, or "".
func ClientIP(ctx context.Context) string {
	if c := ConnFrom(ctx); c != nil {
		return c.IP
	}
	return ""
}

// ReaderOf is the authenticated pubkey of the connection in ctx, or "".
func ReaderOf(ctx context.Context) string {
	if c := ConnFrom(ctx); c != nil && c.Reader != nil {
		return c.Reader()
	}
	return ""
}
