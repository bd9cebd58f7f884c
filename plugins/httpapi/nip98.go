package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw"

	"github.com/nbd-wtf/go-nostr"
)

// kindHTTPAuth is NIP-98's authorization event.
const kindHTTPAuth = 27235

// nip98Window is how far an authorization event's created_at may be from
// now: long enough for clock drift, short enough that a captured header
// soon stops working.
const nip98Window = 60 * time.Second

// auth checks a NIP-98 Authorization header and returns the signer's
// pubkey. The body is read (and put back) to check the payload hash.
func (a *API) auth(req *http.Request) (string, error) {
	h := req.Header.Get("Authorization")
	b64, ok := strings.CutPrefix(h, "Nostr ")
	if !ok {
		return "", snowclaw.AuthRequired("send an Authorization: Nostr <base64 event> header (NIP-98)")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return "", snowclaw.Invalid("Authorization is not base64")
	}
	var evt nostr.Event
	if err := json.Unmarshal(raw, &evt); err != nil {
		return "", snowclaw.Invalid("Authorization is not a nostr event")
	}
	if evt.Kind != kindHTTPAuth {
		return "", snowclaw.Invalid("authorization event must be kind %d", kindHTTPAuth)
	}
	// the id is what the replay cache remembers: it must be the hash of
	// what was signed, or one signed header could pass under many ids
	if !evt.CheckID() {
		return "", snowclaw.Invalid("the authorization event's id is not the hash of its content")
	}
	if ok, _ := evt.CheckSignature(); !ok {
		return "", snowclaw.Invalid("bad signature on the authorization event")
	}
	// the window is judged by the cluster's clock, which also expires the
	// shared record of used headers: an instance whose own clock is
	// behind would otherwise still accept a header the others have
	// forgotten
	if err := a.o.Clock.Check(); err != nil {
		return "", err
	}
	now := a.o.Clock.Now()
	if d := now.Sub(evt.CreatedAt.Time()); d > nip98Window || d < -nip98Window {
		return "", snowclaw.Invalid("authorization event is too old or in the future")
	}
	if m := tagValue(&evt, "method"); !strings.EqualFold(m, req.Method) {
		return "", snowclaw.Invalid("authorization is for method %q, not %s", m, req.Method)
	}
	if err := a.checkAuthURL(tagValue(&evt, "u"), req); err != nil {
		return "", err
	}
	if err := checkPayload(&evt, req); err != nil {
		return "", err
	}
	if err := a.replays.use(evt.ID, evt.CreatedAt.Time(), now); err != nil {
		return "", err
	}
	if a.o.UseOnce != nil {
		fresh, err := a.o.UseOnce(req.Context(), evt.ID, evt.CreatedAt.Time().Add(nip98Window+time.Second))
		if err != nil {
			return "", snowclaw.Internal("could not check the authorization against replays; retry")
		}
		if !fresh {
			return "", errReplayed
		}
	}
	return evt.PubKey, nil
}

// checkPayload holds the body to the payload tag. With a tag, the body
// received must hash to it, an empty one included: a header signed for a
// body must not authorize a request without it. Without one, NIP-98 makes
// the tag a SHOULD, so only an empty body passes. The body is read whole
// and put back (guardHTTP has already capped and buffered it).
func checkPayload(evt *nostr.Event, req *http.Request) error {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxAPIBody+1))
		if err != nil {
			return snowclaw.Invalid("could not read the request body")
		}
		if len(b) > maxAPIBody {
			return snowclaw.Invalid("request body too large")
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		body = b
	}
	sum := sha256.Sum256(body)
	if t := evt.Tags.Find("payload"); t != nil {
		if len(t) < 2 || !strings.EqualFold(t[1], hex.EncodeToString(sum[:])) {
			return snowclaw.Invalid("the payload tag does not match the sha256 of the body received")
		}
		return nil
	}
	if len(body) > 0 {
		return snowclaw.Invalid("the Authorization event needs a payload tag with the sha256 of the body")
	}
	return nil
}

// checkAuthURL compares the signed URL with the request: scheme and host
// must name this relay as the request reached it (origin.go, the rule
// NIP-42 uses too), path and query must match exactly.
func (a *API) checkAuthURL(signed string, req *http.Request) error {
	u, err := url.Parse(signed)
	if err != nil || u.Host == "" {
		return snowclaw.Invalid("authorization u tag is not an absolute URL")
	}
	if !a.o.Relay.NamesRelay(req, u) || u.EscapedPath() != req.URL.EscapedPath() || u.RawQuery != req.URL.RawQuery {
		return snowclaw.Invalid("authorization is for %s, not this URL", signed)
	}
	return nil
}

func tagValue(evt *nostr.Event, key string) string {
	if t := evt.Tags.Find(key); len(t) >= 2 {
		return t[1]
	}
	return ""
}
