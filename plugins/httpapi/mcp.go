package httpapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/mcpserver"
)

// MCPOptions configure /mcp, the memory tools over MCP's streamable HTTP.
type MCPOptions struct {
	// Token lets an MCP host that can only send a fixed header (most can't
	// sign NIP-98 per request) authenticate with "Authorization: Bearer
	// <Token>". Empty: NIP-98 only.
	Token string
	// Identity is the hex public key a bearer client acts as; "" = the
	// owner.
	Identity string
}

// mcpServerKey carries the request's server from mcpAuth to the SDK's
// getServer, which the SDK calls more than once per request.
type mcpServerKey struct{}

// mcpRoutes mounts /mcp. Every request is authenticated on its own (NIP-98
// or the bearer token) and answered by a server whose backend is bound to
// that request's identity.
//
// The handler is stateless, and that is the point: in the SDK's stateful
// mode a session outlives the request that opened it and later requests
// reach it by Mcp-Session-Id alone, so a server bound to the opener's
// identity would serve whoever presents the id (the SDK's own guard only
// knows its OAuth TokenInfo, which NIP-98 cannot set). Stateless, nothing
// survives a request: one server per request, built for the key that
// signed it (the SDK's documented pattern, with a schema cache), so no
// request can act through another identity's session. The tools need no
// server-to-client messages, which is all that stateless mode gives up;
// GET (the notification stream) and DELETE answer 405, which clients
// expect.
func (a *API) mcpRoutes(mux *http.ServeMux) {
	h := mcp.NewStreamableHTTPHandler(func(req *http.Request) *mcp.Server {
		s, _ := req.Context().Value(mcpServerKey{}).(*mcp.Server)
		return s // nil only if mcpAuth was bypassed: the SDK then answers 400
	}, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              a.log.With("component", "mcp"),
		MaxRequestBodyBytes: maxAPIBody,
		// Behind a proxy the relay listens on loopback but sees the public
		// Host, which the SDK's DNS-rebinding guard refuses. Every request
		// here carries a signature or a secret a rebinding page does not
		// have, so the guard is kept only where it costs nothing.
		DisableLocalhostProtection: a.o.Relay.BehindProxy(),
	})
	mux.Handle("/mcp", a.mcpAuth(h))
}

// mcpAuth resolves the request's identity, builds its server and hands
// the request to the SDK; without a valid identity it answers 401.
func (a *API) mcpAuth(next http.Handler) http.Handler {
	logger := a.log.With("component", "mcp")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !a.o.Relay.ServesHost(req.Host) {
			writeError(w, http.StatusForbidden, "restricted: this relay serves /mcp as "+a.o.Relay.PublicHost()+", not "+req.Host)
			return
		}
		if err := bufferBody(req); err != nil {
			a.writeErr(w, err)
			return
		}
		reader, err := a.mcpReader(req)
		if err != nil {
			w.Header().Set("WWW-Authenticate", "Nostr")
			status := statusOf(err)
			if status == http.StatusBadRequest {
				// a bad or stale signature is still "who are you?"
				status = http.StatusUnauthorized
			}
			writeError(w, status, err.Error())
			return
		}
		s := mcpserver.New(a.o.Memory.For(reader), a.o.Version, logger.With("reader", reader))
		next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), mcpServerKey{}, s)))
	})
}

// bufferBody reads the body up front so httpAuth always checks NIP-98's
// payload hash: it skips the check for a body of unknown length (chunked)
// when the event has no payload tag, which would let a captured header
// carry another body.
func bufferBody(req *http.Request) error {
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxAPIBody+1))
	req.Body.Close()
	if err != nil {
		return snowclaw.Invalid("could not read the request body")
	}
	if len(body) > maxAPIBody {
		return snowclaw.Invalid("request body too large")
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	return nil
}

// mcpReader is the identity of an /mcp request: the NIP-98 signer, or
// the configured identity for the bearer token.
func (a *API) mcpReader(req *http.Request) (string, error) {
	h := strings.TrimSpace(req.Header.Get("Authorization"))
	if h == "" {
		return "", snowclaw.AuthRequired("send NIP-98 (Authorization: Nostr <base64 event>) on every request, or Authorization: Bearer <the relay's MCP token>")
	}
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return a.auth(req)
	}
	want := a.o.MCP.Token
	if want == "" || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(want)) != 1 {
		return "", snowclaw.AuthRequired("this bearer token is not the relay's MCP token")
	}
	id := a.o.MCP.Identity
	if id == "" {
		id = a.ids.Owner
	}
	pk, err := snowclaw.ParsePubkey(id)
	if err != nil {
		a.log.Error("mcp: the bearer token's identity is not a public key; set mcp identity or an owner", "identity", id)
		return "", snowclaw.Restricted("the relay's MCP token has no valid identity configured")
	}
	return pk, nil
}
