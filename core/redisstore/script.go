package redisstore

import (
	"embed"
	"io/fs"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/algo"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// checkScript is the one script every check, peek and multi-policy check
// runs: the files under lua/ concatenated in name order (helpers, the six
// algorithms, then the dispatcher in 90_check.lua).
var checkScript = redis.NewScript(scriptSource())

func scriptSource() string {
	names, err := fs.Glob(luaFiles, "lua/*.lua")
	if err != nil {
		panic(err) // the pattern is a constant
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		src, err := luaFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded files are always readable
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String()
}

// Argument layout of the script; see lua/90_check.lua.
const (
	headArgs      = 5 // TTL margin, number of checks (1), now, cost, number of policies
	argsPerPolicy = 7 // algorithm code, limit, window, interval, tolerance, window start, max delay
	replyPerKey   = 5 // allowed, remaining, retry after, reset after, delay
)

// algorithmCode is the number the script dispatches on (decide in
// lua/90_check.lua).
func algorithmCode(a core.Algorithm) int64 {
	switch a {
	case core.FixedWindow:
		return 1
	case core.SlidingLog:
		return 2
	case core.SlidingWindow:
		return 3
	case core.TokenBucket:
		return 4
	case core.GCRA:
		return 5
	case core.LeakyBucket:
		return 6
	}
	return 0 // unreachable for validated params; the script rejects it
}

// appendPolicyArgs appends the script arguments of one policy: everything
// that needs no state is computed in Go rather than in Lua.
func appendPolicyArgs(args []any, pi *policyInfo, now int64) []any {
	var start int64
	if !pi.rateBased {
		start = algo.WindowStart(now, pi.window)
	}
	return append(append(args, pi.args[:]...), start, pi.maxDelay)
}
