package redisstore

import (
	"embed"
	"io/fs"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
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

// Argument layout of the script; see lua/00_common.lua and lua/90_check.lua.
const (
	callHead      = 3 // TTL margin, number of checks, number of policies
	argsPerPolicy = 6 // algorithm code, limit, window, interval, tolerance, max delay
	checkHead     = 3 // now, cost, number of keys; then one policy number per key
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

// calendarCode and slidingCalendarCode are the codes of a fixed and a
// sliding window with calendar bounds, whose arguments policyInfo.at
// computes per window.
const (
	calendarCode        = int64(7)
	slidingCalendarCode = int64(8)
)
