package serve

import (
	"net/http"
	"strings"

	"github.com/kilnbuild/kiln/shared/livesocket"
)

// withSockets serves live build events at /socket.io/ beside the API, on the same listener.
func withSockets(api http.Handler, sockets *livesocket.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/socket.io/") || r.URL.Path == "/socket.io" {
			sockets.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
