package redisstore

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// untag reverses the escaped form of appendTag.
func untag(t *testing.T, tag string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(tag); i++ {
		if tag[i] != '%' {
			b.WriteByte(tag[i])
			continue
		}
		if i+2 >= len(tag) {
			t.Fatalf("tag %q: truncated escape at %d", tag, i)
		}
		v, err := strconv.ParseUint(tag[i+1:i+3], 16, 8)
		if err != nil {
			t.Fatalf("tag %q: bad escape at %d: %v", tag, i, err)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String()
}

// checkKeys asserts the shape of every Redis key for key: the prefix, exactly
// one non-empty hash tag that is the same for every policy, the policy id
// after it, a bounded length, and a tag that gives the caller's key back
// (escaped form) or is a digest of the right length.
func checkKeys(t *testing.T, prefix, key string, policies []core.Policy) {
	t.Helper()
	keys := redisKeys(prefix, key, policies, &policyCache{})
	var tag string
	for i, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			t.Fatalf("key %q lacks prefix %q", k, prefix)
		}
		if strings.Count(k, "{") != 1 || strings.Count(k, "}") != 1 {
			t.Fatalf("key %q for %q: want exactly one '{' and one '}'", k, key)
		}
		open, closing := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if open != len(prefix) || closing <= open+1 {
			t.Fatalf("key %q for %q: hash tag misplaced or empty", k, key)
		}
		if n := maxRedisKeyLen(len(prefix)); len(k) > n {
			t.Fatalf("key for %d-byte input is %d bytes, bound %d", len(key), len(k), n)
		}
		if rest := k[closing+1:]; len(rest) != 1+policyIDLen || rest[0] != ':' {
			t.Fatalf("key %q: policy part %q", k, rest)
		}
		if i == 0 {
			tag = k[open+1 : closing]
		} else if got := k[open+1 : closing]; got != tag {
			t.Fatalf("policies of one key got tags %q and %q", tag, got)
		}
	}
	if strings.HasPrefix(tag, "%H") {
		if len(tag) != hashedTagLen {
			t.Fatalf("digest tag %q has length %d, want %d", tag, len(tag), hashedTagLen)
		}
	} else if got := untag(t, tag); got != key {
		t.Fatalf("tag %q decodes to %q, want %q", tag, got, key)
	}
}

func FuzzKey(f *testing.F) {
	f.Add("user:42", "api", 100, int64(time.Minute), 0, "gcra")
	f.Add("user:{42}", "", 1, int64(time.Second), 5, "token_bucket")
	f.Add("}{", "x", 10, int64(time.Hour), 0, "")
	f.Add("bin\x00\xff\r\n", "n", 3, int64(time.Millisecond), 1, "sliding_log")
	f.Add(strings.Repeat("k", 97), "", 7, int64(24*time.Hour), 0, "fixed_window")
	f.Add(strings.Repeat("{", 40), "", 7, int64(time.Second), 0, "leaky_bucket")
	f.Fuzz(func(t *testing.T, key, name string, limit int, window int64, burst int, alg string) {
		if key == "" {
			return // rejected by core.ValidateKey before any key is built
		}
		p := core.Policy{Name: name, Limit: limit, Window: time.Duration(window), Burst: burst, Algorithm: core.Algorithm(alg)}
		q := p
		q.Limit++
		checkKeys(t, defaultPrefix, key, []core.Policy{p, q})
		checkKeys(t, "", key, []core.Policy{p})
	})
}

func TestKeysDistinct(t *testing.T) {
	// Keys that differ only in braces, escapes or binary bytes, and keys
	// near the digest threshold, all map to distinct tags.
	keys := []string{
		"a", "{a}", "a}", "{a", "%7Ba%7D", "%7B", "{", "}", "%", "%25", "a b", "a%20b",
		"\x00", "%00", "\xff", "%H", "%Habc",
		strings.Repeat("x", maxTagLen), strings.Repeat("x", maxTagLen+1), strings.Repeat("x", maxTagLen+2),
		strings.Repeat("{", maxTagLen/3), strings.Repeat("{", maxTagLen/3+1),
	}
	p := core.Policy{Limit: 1, Window: time.Second}
	seen := map[string]string{}
	for _, k := range keys {
		rk := redisKeys(defaultPrefix, k, []core.Policy{p}, &policyCache{})[0]
		if other, ok := seen[rk]; ok {
			t.Fatalf("keys %q and %q share Redis key %q", other, k, rk)
		}
		seen[rk] = k
		checkKeys(t, defaultPrefix, k, []core.Policy{p})
	}
}

// TestPolicyIDsFollowIdentity: a named policy keeps its key when its limit
// or burst changes, or when its default algorithm is spelled out.
func TestPolicyIDsFollowIdentity(t *testing.T) {
	base := core.Policy{Name: "a", Limit: 10, Window: time.Second, Burst: 2, Algorithm: core.GCRA}
	for _, v := range []core.Policy{
		{Name: "a", Limit: 500, Window: time.Second, Burst: 2, Algorithm: core.GCRA},
		{Name: "a", Limit: 10, Window: time.Second, Burst: 0, Algorithm: core.GCRA},
		{Name: "a", Limit: 10, Window: time.Second, Burst: 2},
	} {
		if a, b := redisKeys("", "k", []core.Policy{base}, &policyCache{})[0], redisKeys("", "k", []core.Policy{v}, &policyCache{})[0]; a != b {
			t.Errorf("%v and %v: keys %q and %q, want one", base, v, a, b)
		}
	}
}

func TestPolicyIDsDistinct(t *testing.T) {
	base := core.Policy{Name: "a", Limit: 10, Window: time.Second, Burst: 2, Algorithm: core.GCRA}
	unnamed := core.Policy{Limit: 10, Window: time.Second, Burst: 2, Algorithm: core.GCRA}
	variants := []core.Policy{base, unnamed}
	for _, f := range []func(*core.Policy){
		func(p *core.Policy) { p.Name = "b" },
		func(p *core.Policy) { p.Window = time.Second + time.Microsecond },
		func(p *core.Policy) { p.Algorithm = core.TokenBucket },
		func(p *core.Policy) { p.Name, p.Algorithm = "agcra", "" }, // fields must not run into each other
	} {
		v := base
		f(&v)
		variants = append(variants, v)
	}
	// Unnamed policies: every number is part of the identity.
	for _, f := range []func(*core.Policy){
		func(p *core.Policy) { p.Limit = 11 },
		func(p *core.Policy) { p.Burst = 0 },
	} {
		v := unnamed
		f(&v)
		variants = append(variants, v)
	}
	ids := redisKeys("", "k", variants, &policyCache{})
	seen := map[string]int{}
	for i, id := range ids {
		if j, ok := seen[id]; ok {
			t.Fatalf("policies %+v and %+v share key %q", variants[j], variants[i], id)
		}
		seen[id] = i
	}
	if again := redisKeys("", "k", variants[:1], &policyCache{})[0]; again != ids[0] {
		t.Fatalf("policy id is not stable: %q then %q", ids[0], again)
	}
}
