package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://user:s3cret@127.0.0.1:6379/0":             "redis://user:xxxxx@127.0.0.1:6379/0",
		"redis://:s3cret@[::1:6379/0":                      "redis://:xxxxx@[::1:6379/0",
		"rediss://u:p%40ss:w@host:6380":                    "rediss://u:xxxxx@host:6380",
		"redis-cluster://a:b@h1:1,h2:2":                    "redis-cluster://a:xxxxx@h1:1,h2:2",
		"redis://user@127.0.0.1:6379":                      "redis://user@127.0.0.1:6379",
		"redis://127.0.0.1:6379/0?password=x@y":            "redis://127.0.0.1:6379/0?password=x@y",
		"memory":                                           "memory",
		"redis-sentinel://u:pw@h1:26379,h2:26379/mymaster": "redis-sentinel://u:xxxxx@h1:26379,h2:26379/mymaster",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestError(t *testing.T) {
	for _, raw := range []string{"redis://user:s3cret@[::1:6379/0"} { // malformed on purpose
		_, err := url.Parse(raw)
		if got := Error(err).Error(); strings.Contains(got, "s3cret") || !strings.Contains(got, "missing ']'") {
			t.Fatalf("Error = %q", got)
		}
	}
}
