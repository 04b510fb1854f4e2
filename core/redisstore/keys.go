package redisstore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/ratelimit-go/ratelimit/core"
)

// maxTagLen bounds the escaped form of a caller's key inside the hash tag;
// longer keys are replaced by a digest.
const maxTagLen = 96

// policyIDLen is the length of a policy id: 9 bytes of SHA-256, base64url.
const policyIDLen = 12

// hashedTagLen is the length of a digest tag: "%H" and 32 bytes, base64url.
const hashedTagLen = 2 + 43

// maxRedisKeyLen bounds the length of every Redis key for a given prefix
// length: prefix, '{', tag, '}', ':', policy id.
func maxRedisKeyLen(prefixLen int) int { return prefixLen + 1 + maxTagLen + 2 + policyIDLen }

const hexDigits = "0123456789ABCDEF"

// tagSafe reports whether b stands for itself in a tag: printable ASCII
// other than the hash-tag braces and the escape character.
func tagSafe(b byte) bool {
	return b > 0x20 && b < 0x7f && b != '{' && b != '}' && b != '%'
}

// appendTag appends the hash-tag content for key: key with every unsafe
// byte as %XX or, when longer than maxTagLen, "%H" and the base64url
// SHA-256 of key; injective, without '{' or '}'.
func appendTag(dst []byte, key string) []byte {
	n := 0
	for i := 0; i < len(key) && n <= maxTagLen; i++ {
		if tagSafe(key[i]) {
			n++
		} else {
			n += 3
		}
	}
	if n > maxTagLen {
		sum := sha256.Sum256([]byte(key))
		dst = append(dst, '%', 'H')
		return base64.RawURLEncoding.AppendEncode(dst, sum[:])
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; tagSafe(c) {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return dst
}

// appendPolicyID appends a short, stable digest of p's core.Identity.
func appendPolicyID(dst []byte, p core.Policy) []byte {
	id := p.Identity()
	var buf [4*binary.MaxVarintLen64 + 2*core.MaxNameLen + 64]byte
	b := buf[:0]
	b = append(b, 'i', 1) // the identity form of the digest
	b = binary.AppendUvarint(b, uint64(len(id.Name)))
	b = append(b, id.Name...)
	b = binary.AppendUvarint(b, uint64(len(id.Algorithm)))
	b = append(b, id.Algorithm...)
	b = binary.AppendVarint(b, int64(id.Limit))
	b = binary.AppendVarint(b, int64(id.Window))
	b = binary.AppendVarint(b, int64(id.Burst))
	if id.Calendar != "" { // absent otherwise, so other policies keep their keys
		b = binary.AppendUvarint(b, uint64(len(id.Calendar)))
		b = append(b, id.Calendar...)
		b = binary.AppendUvarint(b, uint64(len(id.Zone)))
		b = append(b, id.Zone...)
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.AppendEncode(dst, sum[:9])
}

// appendKeyHead appends the prefix and the hash tag of key, which begin
// every Redis key of key (a policy's key is the head and its id).
func appendKeyHead(dst []byte, prefix, key string) []byte {
	dst = append(dst, prefix...)
	dst = append(dst, '{')
	dst = appendTag(dst, key)
	return append(dst, '}', ':')
}

// redisKeys returns the Redis key of every policy for key. The caller has
// validated the policies.
func redisKeys(prefix, key string, policies []core.Policy, cache *policyCache) []string {
	head := appendKeyHead(make([]byte, 0, maxRedisKeyLen(len(prefix))), prefix, key)
	keys := make([]string, len(policies))
	for i, p := range policies {
		keys[i] = string(append(head, cache.get(p).id...))
	}
	return keys
}

// appendKeyHeadIn appends the head of a key whose hash tag is slot: the
// prefix, the tag built from slot, then the key, escaped the same way.
func appendKeyHeadIn(dst []byte, prefix, slot, key string) []byte {
	dst = append(dst, prefix...)
	dst = append(dst, '{')
	dst = appendTag(dst, slot)
	dst = append(dst, '}', ':')
	dst = appendTag(dst, key)
	return append(dst, ':')
}
