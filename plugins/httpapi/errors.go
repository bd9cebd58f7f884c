package httpapi

import (
	"errors"
	"net/http"

	"github.com/snowclaw/snowclaw"
)

// Errors of the memory and rights services and of the relay's write path
// carry a typed reason (snowclaw.Reason); its HTTP status and the text
// the websocket would send are the API's answer, so the transports agree
// on what went wrong. An error without a reason is a failure: 500, its
// text prefixed "error: ".

// statusOf is the HTTP status of err's reason.
func statusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	return snowclaw.ReasonOf(err).Status()
}

// writeErr answers with the error's status and {"error": its text}. A
// store failure is logged here with all its words, once, where the
// client is answered: the client reads only snowclaw.Text's one sentence
// (snowclaw.StoreError).
func (a *API) writeErr(w http.ResponseWriter, err error) {
	if _, ok := errors.AsType[*snowclaw.StoreError](err); ok {
		a.log.Error("the event store failed; the client is told to try again", "err", err)
	}
	writeError(w, statusOf(err), snowclaw.Text(err))
}
