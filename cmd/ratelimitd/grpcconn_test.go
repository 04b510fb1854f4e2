package main

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestGRPCStreamsPerConnection holds maxStreamsPerConn calls open on one
// connection (their headers sent, their message not) and starts one more:
// the server advertises the bound in its SETTINGS and refuses the call past
// it with REFUSED_STREAM, which tells a client it may retry the call on
// another connection. The calls within the bound stay open.
func TestGRPCStreamsPerConnection(t *testing.T) {
	in := start(t)
	c, err := net.Dial("tcp", in.addrs.GRPC)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}

	var hdr bytes.Buffer
	enc := hpack.NewEncoder(&hdr)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":authority", in.addrs.GRPC},
		{":path", "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			t.Fatal(err)
		}
	}
	w := bufio.NewWriter(c)
	if _, err := w.WriteString(http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fw := http2.NewFramer(w, nil)
	if err := fw.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	last := uint32(2*maxStreamsPerConn + 1) // the stream past the bound
	for id := uint32(1); id <= last; id += 2 {
		// The same block on every stream: it holds static-table indexes
		// and literals only, which decode the same each time.
		if err := fw.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hdr.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	fr := http2.NewFramer(nil, bufio.NewReader(c))
	advertised := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no refusal of stream %d: %v (bound advertised: %v)", last, err, advertised)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			v, ok := f.Value(http2.SettingMaxConcurrentStreams)
			if !ok || v != maxStreamsPerConn {
				t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS = %d (set: %v), want %d", v, ok, maxStreamsPerConn)
			}
			advertised = true
		case *http2.RSTStreamFrame:
			if f.StreamID != last || f.ErrCode != http2.ErrCodeRefusedStream {
				t.Fatalf("RST_STREAM on stream %d (%v), want only stream %d refused", f.StreamID, f.ErrCode, last)
			}
			if !advertised {
				t.Fatal("a stream was refused before the bound was advertised")
			}
			return
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY (%v): the connection was closed, not the one call refused", f.ErrCode)
		}
	}
}
