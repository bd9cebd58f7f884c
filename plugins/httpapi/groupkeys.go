package httpapi

import (
	"net/http"

	"github.com/snowclaw/snowclaw"
)

// GroupKeys is the encrypted group tier's key status as the API shows it
// (plugins/groupcrypt): who may see it is decided there, by one rule (the
// relay's owner and the group's admins).
type GroupKeys interface {
	KeyStatus(reader, group string) (snowclaw.GroupKeyStatus, error)
	KeyStatuses(reader string) []snowclaw.GroupKeyStatus
}

// groupKeyRoutes serve the key deliveries of the encrypted groups
// (docs/api.md "Group keys"): the current version and which members hold
// it, never a key.
func (a *API) groupKeyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/groups/keys", a.v1(a.v1GroupKeyList))
	mux.HandleFunc("GET /api/v1/groups/{group}/keys", a.v1(a.v1GroupKeys))
}

func (a *API) v1GroupKeyList(w http.ResponseWriter, _ *http.Request, reader string) {
	list := []snowclaw.GroupKeyStatus{}
	if a.o.GroupKeys != nil {
		list = a.o.GroupKeys.KeyStatuses(reader)
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": list})
}

func (a *API) v1GroupKeys(w http.ResponseWriter, req *http.Request, reader string) {
	if a.o.GroupKeys == nil {
		a.writeErr(w, snowclaw.Unsupported("this relay has no encrypted groups"))
		return
	}
	st, err := a.o.GroupKeys.KeyStatus(reader, req.PathValue("group"))
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
