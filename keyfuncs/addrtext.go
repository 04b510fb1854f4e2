package keyfuncs

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"unsafe"
)

// addrTexts remembers the text of recently formatted client addresses and
// prefixes, so that a client seen again (one flooding a limited route
// included) gets its key without an allocation. It is a fixed table of
// immutable entries, shared by every resolver: bounded memory, no lock, and
// an entry serves only the exact prefix it was made for.
var addrTexts [1 << addrTextBits]atomic.Pointer[addrText]

const addrTextBits = 14

// addrText is a prefix and its text, in one allocation with no pointer.
// addr (the 16-byte form) and bits tell every prefix apart: an IPv4
// prefix's addr starts with ::ffff, which no IPv6 prefix of 32 bits or
// fewer has.
type addrText struct {
	addr [16]byte
	bits int16
	n    uint8
	text [maxPrefixText]byte
}

// maxPrefixText is the longest text of a prefix without a zone.
const maxPrefixText = len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")

// prefixText returns the canonical text of p (which netip.Addr.Prefix made,
// so without a zone): its address's text when p covers one address, else
// p.String().
func prefixText(p netip.Prefix) string {
	a, bits := p.Addr(), p.Bits()
	b := a.As16()
	h := binary.LittleEndian.Uint64(b[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(b[8:])*0xc2b2ae3d27d4eb4f ^ uint64(bits)
	slot := &addrTexts[h>>(64-addrTextBits)]
	if e := slot.Load(); e != nil && e.addr == b && int(e.bits) == bits {
		return unsafe.String(&e.text[0], e.n)
	}
	e := &addrText{addr: b, bits: int16(bits)}
	var t []byte
	if bits == a.BitLen() {
		t = a.AppendTo(e.text[:0])
	} else {
		t = p.AppendTo(e.text[:0])
	}
	if len(t) > len(e.text) { // not for a prefix without a zone: never cached
		return string(t)
	}
	e.n = uint8(len(t))
	slot.Store(e)
	return unsafe.String(&e.text[0], e.n)
}
