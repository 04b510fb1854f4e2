package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// backendConfig carries the backend flags to a backend constructor.
type backendConfig struct {
	// RedisURL is the -redis flag: a redis:// or rediss:// URL, or empty.
	RedisURL string
	// RedisCluster is the -redis-cluster flag split on commas: the seed
	// addresses of a Redis Cluster, or nil.
	RedisCluster []string
}

// backendFactory opens a backend for one run of the bench. close releases
// it (connections, goroutines) and is called once when the run ends; it may
// be nil.
type backendFactory func(cfg backendConfig) (b core.Backend, close func(), err error)

// knownBackends are the names -backend accepts. A name may be known without
// a constructor in this build: "redis" registers itself from redis.go.
var knownBackends = []string{"memory", "redis"}

// backends maps a backend name to its constructor. Other files of this
// package add theirs with registerBackend from an init function.
var backends = map[string]backendFactory{
	"memory": openMemory,
}

// registerBackend makes name selectable with -backend. It panics on a
// duplicate name, a programming error caught at start-up.
func registerBackend(name string, f backendFactory) {
	if _, dup := backends[name]; dup {
		panic("ratelimit-bench: backend " + name + " registered twice")
	}
	backends[name] = f
	if slices.Contains(knownBackends, name) {
		return
	}
	knownBackends = append(knownBackends, name)
}

// lookupBackend returns the constructor registered for name, or an error
// that says whether the name is unknown or merely not built in.
func lookupBackend(name string) (backendFactory, error) {
	if f, ok := backends[name]; ok {
		return f, nil
	}
	if slices.Contains(knownBackends, name) {
		return nil, fmt.Errorf("backend %q has no constructor in this build (it registers itself from cmd/ratelimit-bench/%s.go)", name, name)
	}
	names := append([]string(nil), knownBackends...)
	sort.Strings(names)
	return nil, fmt.Errorf("unknown backend %q; want one of %s", name, strings.Join(names, ", "))
}

// openMemory opens the in-memory store (the
// default): nothing but the measured checks runs, and expired keys are
// reclaimed within them, as in production.
func openMemory(backendConfig) (core.Backend, func(), error) {
	s, err := memstore.New()
	if err != nil {
		return nil, nil, err
	}
	return s, func() {}, nil
}
