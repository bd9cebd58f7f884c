package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/snowclaw/snowclaw/plugins/rights"
)

// Errors of the memory service and the rights service carry the NIP-01 prefix
// of the websocket answers; HTTP routes turn the prefix into a status with
// statusOf, so the two transports agree on what went wrong.

// statusOf maps an error's NIP-01 prefix to an HTTP status.
func statusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	if errors.Is(err, rights.ErrForbidden) {
		return http.StatusForbidden
	}
	var se interface{ HTTPStatus() int }
	if errors.As(err, &se) {
		return se.HTTPStatus() // the relay's disk-full refusal: 507
	}
	prefix, _, _ := strings.Cut(err.Error(), ":")
	switch prefix {
	case "invalid", "pow":
		return http.StatusBadRequest
	case "auth-required":
		return http.StatusUnauthorized
	case "restricted", "blocked":
		return http.StatusForbidden
	case "not-found", "not found":
		return http.StatusNotFound
	case "duplicate":
		return http.StatusConflict
	case "rate-limited":
		return http.StatusTooManyRequests
	case "unsupported":
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeErr answers with the error's status and {"error": message}. An
// error without a prefix is an internal one: it gets "error:".
func writeErr(w http.ResponseWriter, err error) {
	msg := err.Error()
	if statusOf(err) == http.StatusInternalServerError && !strings.HasPrefix(msg, "error:") {
		msg = "error: " + msg
	}
	writeError(w, statusOf(err), msg)
}
