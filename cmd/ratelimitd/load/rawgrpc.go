package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
)

// h2Conn is one HTTP/2 connection (cleartext, prior knowledge) carrying
// the gRPC calls of every client at once, as grpc-go's client does with
// its one connection: each call is a stream of prepared frames, and one
// goroutine reads the answers and hands each to its caller. grpc-go's
// client spent about as much CPU per call as the server it measured, on
// the same two cores; this one spends a fraction, so that the figures are
// the server's. -client std measures with grpc-go's client.
//
// It speaks what a gRPC server needs: the connection preface, SETTINGS and
// their acknowledgement, PING answers, flow control in both directions
// (its own windows opened wide and topped up, the server's respected), and
// it reads HEADERS with CONTINUATION, DATA, trailers, trailers-only
// answers, RST_STREAM and GOAWAY. A call's outcome is the answer's
// overall_code, or "error:" and its gRPC status.
type h2Conn struct {
	c      net.Conn
	header []byte // the request's HPACK block: literals never indexed, so the same bytes serve every call

	wmu     sync.Mutex // guards what follows: frames are queued in stream id order
	nextID  uint32
	pend    []byte // frames queued for the connection
	spare   []byte // the buffer last written, for reuse
	writing bool   // a caller is writing pend out; others only queue

	mu       sync.Mutex
	sendable sync.Cond // signalled when the connection's send window grows or the connection fails
	window   int64     // the server's connection-level window for our DATA
	streams  map[uint32]*h2Call
	err      error // set once the connection has failed; every later call fails with it
}

// h2Call is one call in flight.
type h2Call struct {
	done   chan struct{} // closed when the call has ended
	msg    []byte        // the answer's gRPC message(s), length-prefixed
	status string        // grpc-status from the trailers
	http   string        // :status
	err    error
}

// Our receive windows: opened wide at once and topped up as answers
// arrive, so the server never waits on us.
const (
	h2StreamWindow = 1 << 20
	h2ConnWindow   = 1 << 30
)

// dialH2 connects to addr, sends the preface and its settings, and starts
// the reader. No read or write outlasts deadline. A timeout above zero (in
// whole milliseconds) goes with every call as its grpc-timeout.
func dialH2(addr string, deadline time.Time, timeout time.Duration, tlsConfig *tls.Config) (*h2Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(deadline); err != nil {
		c.Close()
		return nil, err
	}
	scheme := "http"
	if tlsConfig != nil {
		if c, err = handshake(c, addr, tlsConfig, "h2"); err != nil {
			return nil, err
		}
		if p := c.(*tls.Conn).ConnectionState().NegotiatedProtocol; p != "h2" {
			c.Close()
			return nil, fmt.Errorf("TLS: the server negotiated %q, not h2", p)
		}
		scheme = "https"
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fields := [][2]string{
		{":method", "POST"}, {":scheme", scheme}, {":path", "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"},
		{":authority", addr}, {"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "ratelimit-load"},
	}
	if timeout > 0 {
		fields = append(fields, [2]string{"grpc-timeout", strconv.FormatInt(timeout.Milliseconds(), 10) + "m"})
	}
	for _, f := range fields {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1], Sensitive: true}); err != nil {
			c.Close()
			return nil, err
		}
	}
	h := &h2Conn{c: c, header: hb.Bytes(), nextID: 1, window: 65535, streams: map[uint32]*h2Call{}}
	h.sendable.L = &h.mu
	var b bytes.Buffer
	b.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&b, nil)
	if err := errors.Join(
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow}, http2.Setting{ID: http2.SettingEnablePush, Val: 0}),
		fr.WriteWindowUpdate(0, h2ConnWindow-65535),
	); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write(b.Bytes()); err != nil {
		c.Close()
		return nil, err
	}
	go h.read()
	return h, nil
}

// call sends one request message (gRPC-framed) and waits for its outcome.
func (h *h2Conn) call(msg []byte) (string, error) {
	if len(msg) > 16384 { // the smallest frame a server must accept
		return "", errors.New("request message over 16 KiB")
	}
	cl := &h2Call{done: make(chan struct{})}
	// Take room in the server's window first, without holding the writer's
	// lock: the reader needs that lock to answer the server, which may be
	// what the server waits for before it opens its window again.
	h.mu.Lock()
	for h.err == nil && h.window < int64(len(msg)) {
		h.sendable.Wait()
	}
	if h.err != nil {
		err := h.err
		h.mu.Unlock()
		return "", err
	}
	h.window -= int64(len(msg))
	h.mu.Unlock()
	// Streams must open in the order of their ids: take one and write
	// under the writer's lock.
	h.wmu.Lock()
	id := h.nextID
	if id > 1<<31-1 {
		h.wmu.Unlock()
		return "", errors.New("stream ids exhausted")
	}
	h.nextID += 2
	h.mu.Lock()
	if h.err != nil {
		err := h.err
		h.mu.Unlock()
		h.wmu.Unlock()
		return "", err
	}
	h.streams[id] = cl
	h.mu.Unlock()
	b := appendFrameHeader(h.pend, len(h.header), http2.FrameHeaders, http2.FlagHeadersEndHeaders, id)
	b = append(b, h.header...)
	b = appendFrameHeader(b, len(msg), http2.FrameData, http2.FlagDataEndStream, id)
	h.pend = append(b, msg...)
	h.flush()
	<-cl.done
	if cl.err != nil {
		return "", cl.err
	}
	return cl.outcome()
}

// outcome names an ended call's answer as grpc-go's client would see it.
func (cl *h2Call) outcome() (string, error) {
	if cl.http != "200" {
		return "", fmt.Errorf("HTTP status %q", cl.http)
	}
	n, err := strconv.Atoi(cl.status)
	if err != nil {
		return "", fmt.Errorf("grpc-status %q", cl.status)
	}
	if n != 0 {
		code := codes.Code(n).String()
		return "error:" + code, fmt.Errorf("rpc error: %s", code)
	}
	if len(cl.msg) < 5 || cl.msg[0] != 0 || int(binary.BigEndian.Uint32(cl.msg[1:5])) != len(cl.msg)-5 {
		return "", errors.New("not one uncompressed gRPC message")
	}
	oc, err := overallCode(cl.msg[5:])
	if err != nil {
		return "", err
	}
	return oc.String(), nil
}

// overallCode reads field 1 (overall_code) of a RateLimitResponse; absent,
// it is the zero value, UNKNOWN.
func overallCode(b []byte) (rlsv3.RateLimitResponse_Code, error) {
	var code rlsv3.RateLimitResponse_Code
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			code = rlsv3.RateLimitResponse_Code(v)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return code, nil
}

// appendFrameHeader appends an HTTP/2 frame header.
func appendFrameHeader(b []byte, length int, t http2.FrameType, flags http2.Flags, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), byte(t), byte(flags),
		byte(stream>>24), byte(stream>>16), byte(stream>>8), byte(stream))
}

// read is the connection's reader: it hands every answer to its call and
// keeps the connection's obligations (acknowledgements, windows) until
// the connection fails or is closed.
func (h *h2Conn) read() {
	fr := http2.NewFramer(nil, bufio.NewReaderSize(h.c, 64<<10))
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 1 << 20
	unacked := 0 // DATA bytes received and not yet returned to the server's connection window
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			h.fail(err)
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if err := f.ForeachSetting(func(s http2.Setting) error {
				if s.ID == http2.SettingInitialWindowSize && s.Val < 16384 {
					return fmt.Errorf("the server's stream window (%d bytes) may not hold a request", s.Val)
				}
				return nil
			}); err != nil {
				h.fail(err)
				return
			}
			h.write(func(b []byte) []byte { return appendFrameHeader(b, 0, http2.FrameSettings, http2.FlagSettingsAck, 0) })
		case *http2.PingFrame:
			if !f.IsAck() {
				data := f.Data
				h.write(func(b []byte) []byte {
					return append(appendFrameHeader(b, 8, http2.FramePing, http2.FlagPingAck, 0), data[:]...)
				})
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				h.mu.Lock()
				h.window += int64(f.Increment)
				h.sendable.Broadcast()
				h.mu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			cl := h.stream(f.StreamID)
			if cl == nil {
				continue
			}
			for _, hf := range f.Fields {
				switch hf.Name {
				case ":status":
					cl.http = hf.Value
				case "grpc-status":
					cl.status = hf.Value
				}
			}
			if f.StreamEnded() {
				h.end(f.StreamID, nil)
			}
		case *http2.DataFrame:
			if unacked += int(f.Length); unacked >= h2ConnWindow/2 {
				n := uint32(unacked)
				unacked = 0
				h.write(func(b []byte) []byte {
					return binary.BigEndian.AppendUint32(appendFrameHeader(b, 4, http2.FrameWindowUpdate, 0, 0), n)
				})
			}
			if cl := h.stream(f.StreamID); cl != nil {
				cl.msg = append(cl.msg, f.Data()...)
				if len(cl.msg) > h2StreamWindow {
					h.end(f.StreamID, errors.New("an answer over 1 MiB"))
				} else if f.StreamEnded() {
					h.end(f.StreamID, nil) // no trailers: outcome reports the missing grpc-status
				}
			}
		case *http2.RSTStreamFrame:
			h.end(f.StreamID, fmt.Errorf("stream reset: %v", f.ErrCode))
		case *http2.GoAwayFrame:
			h.fail(fmt.Errorf("the server sent GOAWAY: %v", f.ErrCode))
			return
		}
	}
}

// stream returns the call of stream id, or nil.
func (h *h2Conn) stream(id uint32) *h2Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

// end ends the call of stream id with err (nil: its answer is complete).
func (h *h2Conn) end(id uint32, err error) {
	h.mu.Lock()
	cl := h.streams[id]
	delete(h.streams, id)
	h.mu.Unlock()
	if cl != nil {
		cl.err = err
		close(cl.done)
	}
}

// write queues a frame built by add and sends it, between the callers'
// requests.
func (h *h2Conn) write(add func([]byte) []byte) {
	h.wmu.Lock()
	h.pend = add(h.pend)
	h.flush()
}

// flush is called with wmu held, and releases it: unless another caller is
// already writing (it will write what was queued too), it writes the queued
// frames until none are left. Under load one write carries the frames of
// many calls, as a gRPC client's writer does.
func (h *h2Conn) flush() {
	if h.writing {
		h.wmu.Unlock()
		return
	}
	h.writing = true
	var err error
	for len(h.pend) > 0 && err == nil {
		b := h.pend
		h.pend = h.spare[:0]
		h.wmu.Unlock()
		_, err = h.c.Write(b)
		h.wmu.Lock()
		h.spare = b
	}
	h.pend = h.pend[:0]
	h.writing = false
	h.wmu.Unlock()
	if err != nil {
		h.fail(err)
	}
}

// fail ends the connection and every call in flight with err; later calls
// fail with it at once.
func (h *h2Conn) fail(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	streams := h.streams
	h.streams = map[uint32]*h2Call{}
	h.sendable.Broadcast()
	h.mu.Unlock()
	h.c.Close()
	for _, cl := range streams {
		cl.err = err
		close(cl.done)
	}
}

// close closes the connection; calls in flight fail.
func (h *h2Conn) close() { h.fail(net.ErrClosed) }

// grpcMessage frames a serialized message as gRPC does: uncompressed, its
// length first.
func grpcMessage(m []byte) []byte {
	b := make([]byte, 5, 5+len(m))
	binary.BigEndian.PutUint32(b[1:], uint32(len(m)))
	return append(b, m...)
}
