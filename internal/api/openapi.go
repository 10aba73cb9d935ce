package api

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 document of this API, served at
// GET /api/openapi.json; a test holds it to the routes the handler serves.
//
//go:embed openapi.json
var OpenAPI []byte

func (h *handler) openapi(w http.ResponseWriter, r *http.Request, _ *caller) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(OpenAPI)
}
