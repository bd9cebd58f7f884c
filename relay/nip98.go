package relay

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// kindHTTPAuth is NIP-98's authorization event.
const kindHTTPAuth = 27235

// nip98Window is how far an authorization event's created_at may be from
// now: long enough for clock drift, short enough that a captured header
// soon stops working.
const nip98Window = 60 * time.Second

// maxAPIBody bounds what an API request may send.
const maxAPIBody = 1 << 20

// httpAuth checks a NIP-98 Authorization header and returns the signer's
// pubkey. The body is read (and put back) to check the payload hash.
func (r *Relay) httpAuth(req *http.Request) (string, error) {
	h := req.Header.Get("Authorization")
	b64, ok := strings.CutPrefix(h, "Nostr ")
	if !ok {
		return "", errors.New("auth-required: send an Authorization: Nostr <base64 event> header (NIP-98)")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return "", errors.New("invalid: Authorization is not base64")
	}
	var evt nostr.Event
	if err := json.Unmarshal(raw, &evt); err != nil {
		return "", errors.New("invalid: Authorization is not a nostr event")
	}
	if evt.Kind != kindHTTPAuth {
		return "", fmt.Errorf("invalid: authorization event must be kind %d", kindHTTPAuth)
	}
	if ok, _ := evt.CheckSignature(); !ok {
		return "", errors.New("invalid: bad signature on the authorization event")
	}
	if d := time.Since(evt.CreatedAt.Time()); d > nip98Window || d < -nip98Window {
		return "", errors.New("invalid: authorization event is too old or in the future")
	}
	if m := tagValue(&evt, "method"); !strings.EqualFold(m, req.Method) {
		return "", fmt.Errorf("invalid: authorization is for method %q, not %s", m, req.Method)
	}
	if err := r.checkAuthURL(tagValue(&evt, "u"), req); err != nil {
		return "", err
	}
	// a chunked body has ContentLength -1: it is read and checked too, or
	// a captured header could carry another body
	if want := tagValue(&evt, "payload"); want != "" || req.ContentLength != 0 {
		body, err := io.ReadAll(io.LimitReader(req.Body, maxAPIBody+1))
		if err != nil {
			return "", errors.New("invalid: could not read the request body")
		}
		if len(body) > maxAPIBody {
			return "", errors.New("invalid: request body too large")
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if sum := sha256.Sum256(body); len(body) > 0 && want != hex.EncodeToString(sum[:]) {
			return "", errors.New("invalid: the payload tag does not match the body's sha256")
		}
	}
	return evt.PubKey, nil
}

// checkAuthURL compares the signed URL with the request: path and query
// must match exactly; the host must be the request's or the configured
// public one (behind a proxy the relay sees another host).
func (r *Relay) checkAuthURL(signed string, req *http.Request) error {
	u, err := url.Parse(signed)
	if err != nil || u.Host == "" {
		return errors.New("invalid: authorization u tag is not an absolute URL")
	}
	// The Host header is the sender's to choose, so with a public URL
	// configured only that host counts (loopback stays usable for local
	// tools): a header someone signed for another site cannot be replayed
	// here under that site's name. Without one the relay knows no other
	// name for itself than the one it was reached by.
	hostOK := strings.EqualFold(u.Host, req.Host)
	if public := r.publicHost(); public != "" {
		hostOK = strings.EqualFold(u.Host, public) || hostOK && isLoopbackHost(req.Host)
	}
	if !hostOK || u.EscapedPath() != req.URL.EscapedPath() || u.RawQuery != req.URL.RawQuery {
		return fmt.Errorf("invalid: authorization is for %s, not this URL", signed)
	}
	return nil
}

func tagValue(evt *nostr.Event, key string) string {
	if t := evt.Tags.Find(key); len(t) >= 2 {
		return t[1]
	}
	return ""
}
