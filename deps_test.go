package ratelimit_test

import (
	"os"
	"strings"
	"testing"
)

// TestRootModuleIsLean pins the root module's requirements: a program that
// imports only the library (core, the stores, resilient, keyfuncs, the
// middleware core and stdhttp) must not inherit a web framework, gRPC or
// Prometheus as module requirements. Those live in modules of their own
// (ginrl, echorl, fiberrl, examples); scripts/check-deps.sh proves the same
// from a scratch module's go list -m all.
func TestRootModuleIsLean(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{
		"github.com/gin-gonic/", "github.com/labstack/", "github.com/gofiber/", "github.com/valyala/",
		"github.com/quic-go/", "go.mongodb.org/", "google.golang.org/grpc", "github.com/prometheus/",
		"github.com/envoyproxy/", "github.com/bytedance/",
	}
	for i, line := range strings.Split(string(b), "\n") {
		for _, f := range forbidden {
			if strings.Contains(line, f) {
				t.Errorf("go.mod:%d requires %q; move the package that needs it into a module of its own", i+1, strings.TrimSpace(line))
			}
		}
	}
}
