package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rawConn is one client's keep-alive HTTP/1.1 connection, for the http and
// json modes: requests are written as prepared bytes and responses read
// with a small parser. net/http's client spends several times the CPU of
// the server it measures here, on the same two cores, and that time was in
// every latency the generator reported; this client spends little, so the
// figures are the server's. -client std measures with net/http's client.
//
// It reads what an HTTP/1.1 server sends: a status line, header fields, a
// body framed by Content-Length or chunked (with trailers), and
// "Connection: close", after which it dials again. A 1xx interim answer or
// a body framed by the connection's end is an error.
type rawConn struct {
	addr     string
	deadline time.Time   // of every read and write
	tls      *tls.Config // nil: plaintext
	c        net.Conn
	r        *bufio.Reader
}

// do sends one prepared request and returns the response's status code.
func (rc *rawConn) do(req []byte) (int, error) {
	if rc.c == nil {
		c, err := net.DialTimeout("tcp", rc.addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		if err := c.SetDeadline(rc.deadline); err != nil {
			c.Close()
			return 0, err
		}
		if rc.tls != nil {
			tc, err := handshake(c, rc.addr, rc.tls, "http/1.1")
			if err != nil {
				return 0, err
			}
			c = tc
		}
		rc.c = c
		if rc.r == nil {
			rc.r = bufio.NewReaderSize(c, 4096)
		} else {
			rc.r.Reset(c)
		}
	}
	code, keep, err := rc.roundTrip(req)
	if err != nil || !keep {
		rc.close()
	}
	return code, err
}

func (rc *rawConn) close() {
	if rc.c != nil {
		rc.c.Close()
		rc.c = nil
	}
}

func (rc *rawConn) roundTrip(req []byte) (code int, keep bool, err error) {
	if _, err := rc.c.Write(req); err != nil {
		return 0, false, err
	}
	line, err := rc.line()
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	if code, err = strconv.Atoi(string(line[9:12])); err != nil || code < 200 {
		return 0, false, fmt.Errorf("bad or interim status line %q", line)
	}
	keep = line[7] == '1'
	length, chunked := -1, false
	for {
		h, err := rc.line()
		if err != nil {
			return 0, false, err
		}
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("bad header field %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
			if !chunked {
				return 0, false, fmt.Errorf("unsupported Transfer-Encoding %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			}
		}
	}
	switch {
	case chunked:
		err = rc.chunks()
	case length >= 0:
		_, err = rc.r.Discard(length)
	default:
		err = errors.New("a response without Content-Length or chunked framing")
	}
	if err != nil {
		return 0, false, err
	}
	return code, keep, nil
}

// chunks reads a chunked body and its trailer section.
func (rc *rawConn) chunks() error {
	for {
		line, err := rc.line()
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 31)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailer fields, up to the empty line
				t, err := rc.line()
				if err != nil || len(t) == 0 {
					return err
				}
			}
		}
		if _, err := rc.r.Discard(int(n)); err != nil {
			return err
		}
		if crlf, err := rc.line(); err != nil || len(crlf) != 0 {
			return fmt.Errorf("chunk without its CRLF: %v", err)
		}
	}
}

// line reads one CRLF-terminated line (the CRLF cut off); it is valid
// until the next read.
func (rc *rawConn) line() ([]byte, error) {
	l, err := rc.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("a header line longer than 4 KiB")
		}
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return bytes.TrimSuffix(l[:len(l)-1], []byte("\r")), nil
}

// rawRequest is a prepared POST with a JSON body.
func rawRequest(host, path string, body []byte) []byte {
	b := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ratelimit-load\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, host, len(body))
	return append(b, body...)
}

// handshake runs a TLS client handshake on c, offering proto by ALPN, and
// returns the TLS connection; it closes c when the handshake fails.
func handshake(c net.Conn, addr string, cfg *tls.Config, proto string) (net.Conn, error) {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{proto}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(c, cfg)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return tc, nil
}
