package stdhttp_test

import (
	"net/http"
	"testing"
)

func BenchmarkFloorTwoHeaders(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd["Ratelimit-Policy"] = []string{"\"api\";q=1000000000;w=3600"}
		hd["Ratelimit"] = []string{"\"api\";r=999999999;t=3600"}
		benchHandler.ServeHTTP(w, r)
	})
	benchServe(b, h)
}
