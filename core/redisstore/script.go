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

// algorithmCodes holds each algorithm at the number the script dispatches
// on (loaders in lua/90_check.lua).
var algorithmCodes = [...]core.Algorithm{1: core.FixedWindow, 2: core.SlidingLog, 3: core.SlidingWindow,
	4: core.TokenBucket, 5: core.GCRA, 6: core.LeakyBucket}

// algorithmCode is a's number in algorithmCodes, 0 (which the script
// rejects) for none: unreachable for validated params.
func algorithmCode(a core.Algorithm) int64 {
	for c, ca := range algorithmCodes {
		if ca == a {
			return int64(c)
		}
	}
	return 0
}

// calendarCode and slidingCalendarCode are the codes of a fixed and a
// sliding window with calendar bounds, whose arguments policyInfo.at
// computes per window.
const (
	calendarCode        = int64(7)
	slidingCalendarCode = int64(8)
)
