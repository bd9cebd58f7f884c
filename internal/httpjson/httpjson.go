// Package httpjson writes the JSON answers of every HTTP surface (the
// relay's request guard and the API), so that an error looks the same
// whichever layer refused the request: {"error": "<prefix>: <message>"}.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// MaxBody is the largest request body any endpoint takes (1 MiB).
const MaxBody = 1 << 20

// WriteJSON answers with status and v, indented.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// WriteError answers with status and {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, map[string]string{"error": msg})
}
