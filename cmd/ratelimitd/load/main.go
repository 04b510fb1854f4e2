// Command load is a bounded load generator for ratelimitd and for
// envoyproxy/ratelimit, loopback only. It sends checks from -c concurrent
// clients, round-robin over -keys keys, until -n requests or -duration,
// whichever comes first, and prints the throughput and the p50 and p99
// latency of the calls.
//
//	go run ./cmd/ratelimitd/load -mode http  -target 127.0.0.1:8080   # POST /v1/check (ratelimitd)
//	go run ./cmd/ratelimitd/load -mode grpc  -target 127.0.0.1:8081   # ShouldRateLimit (either service)
//	go run ./cmd/ratelimitd/load -mode json  -target 127.0.0.1:8080   # POST /json (envoyproxy/ratelimit)
//	go run ./cmd/ratelimitd/load -mode forward -endpoint edge         # GET /v1/forward-auth/edge (ratelimitd)
//	go run ./cmd/ratelimitd/load -mode grpc  -floor                   # a do-nothing server, for scale
//
// -floor starts, in the same process, a server of the mode's protocol that
// does no work (it writes a fixed answer) and loads it instead of -target:
// the most this machine and this generator can measure.
// -serve runs the same do-nothing server alone, in a process of its own,
// as the service runs: loading that is the floor for a server that does
// not share the generator's process.
// -client std sends with net/http's client (grpc-go's for -mode grpc)
// instead of the generator's lean ones, which leave more of the two cores
// to the server.
// -rate R paces the clients to R requests per second in all (an open
// loop): each sends at its own fixed interval, and a call's latency counts
// from the instant it was due, so a server that falls behind the pace
// sees every late start in its figures. Without -rate each client sends
// its next call as soon as the last returns (a closed loop), and the
// latency is then mostly the queue of the other clients' calls: at
// saturation the mean is -c divided by the throughput.
// -grpc-timeout D gives every ShouldRateLimit call a deadline D away, as
// Envoy does (its rate-limit filter's timeout, 20ms by default): the
// grpc-timeout header field, or a context deadline with -client std.
// The policy is -policy for -mode http; -mode forward asks as Caddy's
// forward_auth does (X-Forwarded-Method GET, X-Forwarded-Uri /, each key an
// address in X-Forwarded-For), at the forward_auth endpoint -endpoint; the Envoy modes send domain -domain
// with one descriptor (-descriptor, the key per request as its value).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	extv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

type options struct {
	mode, target, policy, domain, descriptor, label string
	endpoint                                        string
	tls                                             *tls.Config // nil: plaintext
	client                                          string
	conc, keys, n                                   int
	duration                                        time.Duration
	grpcTimeout                                     time.Duration
	rate                                            float64
	floor                                           bool
	serve                                           string
}

func main() {
	o, err := parse(os.Args[1:])
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "load:", err)
		}
		os.Exit(2)
	}
	if o.serve != "" {
		if err := serveFloor(o.mode, o.serve); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	if o.floor {
		addr, stop, err := startFloor(o.mode)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		defer stop()
		o.target = addr
	}
	r, err := runLoad(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	fmt.Println(r)
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&o.mode, "mode", "http", "http (POST /v1/check), forward (GET /v1/forward-auth/ENDPOINT), grpc (ShouldRateLimit) or json (envoyproxy/ratelimit's POST /json)")
	fs.StringVar(&o.endpoint, "endpoint", "edge", "forward_auth endpoint for -mode forward")
	var useTLS bool
	var caFile, certFile, keyFile string
	fs.BoolVar(&useTLS, "tls", false, "speak TLS to the target (ALPN h2 for gRPC), trusting -ca")
	fs.StringVar(&caFile, "ca", "", "with -tls: the CA file of the target's certificate (default: the system's roots)")
	fs.StringVar(&certFile, "cert", "", "with -tls: a client certificate file, for a target that requires one (with -key)")
	fs.StringVar(&keyFile, "key", "", "with -tls: the client certificate's key file")
	fs.StringVar(&o.target, "target", "", "host:port of the service; loopback only (default 127.0.0.1:8081 for -mode grpc, ratelimitd's gRPC port, else 127.0.0.1:8080)")
	fs.StringVar(&o.policy, "policy", "api", "policy name (or inline policy) for -mode http")
	fs.StringVar(&o.domain, "domain", "load", "Envoy domain for -mode grpc and json")
	fs.StringVar(&o.descriptor, "descriptor", "user", "descriptor key for -mode grpc and json; the request's key is its value")
	fs.StringVar(&o.label, "label", "", "name of this run in the output")
	fs.StringVar(&o.client, "client", "raw", "client: raw (for http and json, a lean HTTP/1.1 client, one keep-alive connection per client; for grpc, a lean HTTP/2 client, every client's calls on one connection) or std (net/http's; grpc-go's, on one connection)")
	fs.IntVar(&o.conc, "c", 64, "concurrent clients")
	fs.IntVar(&o.keys, "keys", 1000, "distinct keys, round-robin")
	fs.IntVar(&o.n, "n", 200_000, "requests at most")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "time at most")
	fs.DurationVar(&o.grpcTimeout, "grpc-timeout", 0, "for -mode grpc, each call's deadline, as Envoy sends one (20ms by default there); 0 sends none")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second in all, paced across the clients; 0 sends each client's next call as soon as its last returns")
	fs.BoolVar(&o.floor, "floor", false, "load a do-nothing server of the mode's protocol, started here, instead of -target")
	fs.StringVar(&o.serve, "serve", "", "serve the do-nothing server of -floor on this loopback host:port, in this process alone, until stopped (10 minutes at most), and send no load")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if useTLS {
		var err error
		if o.tls, err = clientTLS(caFile, certFile, keyFile); err != nil {
			return o, err
		}
	} else if caFile != "" || certFile != "" || keyFile != "" {
		return o, errors.New("-ca, -cert and -key are for -tls")
	}
	if o.target == "" {
		o.target = "127.0.0.1:8080"
		if o.mode == "grpc" {
			o.target = "127.0.0.1:8081"
		}
	}
	if err := loopback("-target", o.target); err != nil {
		return o, err
	}
	if o.serve != "" {
		if err := loopback("-serve", o.serve); err != nil {
			return o, err
		}
	}
	switch {
	case o.mode != "http" && o.mode != "grpc" && o.mode != "json" && o.mode != "forward":
		return o, fmt.Errorf("-mode %q: want http, forward, grpc or json", o.mode)
	case o.client != "raw" && o.client != "std":
		return o, fmt.Errorf("-client %q: want raw or std", o.client)
	case o.conc < 1 || o.conc > 1024:
		return o, fmt.Errorf("-c %d: want 1 to 1024", o.conc)
	case o.keys < 1, o.n < 1, o.n > 100_000_000, o.keys > 10_000_000:
		return o, errors.New("-keys and -n must be positive, -keys at most 10,000,000 and -n at most 100,000,000")
	case o.duration <= 0 || o.duration > 15*time.Minute:
		return o, errors.New("-duration: want up to 15m")
	case o.rate < 0 || o.rate > 10_000_000:
		return o, fmt.Errorf("-rate %v: want 0 to 10,000,000", o.rate)
	case o.grpcTimeout != 0 && (o.grpcTimeout < time.Millisecond || o.grpcTimeout > time.Minute || o.grpcTimeout%time.Millisecond != 0):
		return o, fmt.Errorf("-grpc-timeout %v: want 0 (none) or whole milliseconds from 1ms to 1m", o.grpcTimeout)
	case o.grpcTimeout != 0 && o.mode != "grpc":
		return o, fmt.Errorf("-grpc-timeout is for -mode grpc, not %s", o.mode)
	}
	if o.label == "" {
		o.label = o.mode + " " + o.target
		if o.floor {
			o.label = "floor: " + o.mode + ", a fixed answer"
		}
	}
	return o, nil
}

// loopback refuses a host:port that is not on the loopback interface.
func loopback(flag, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %v", flag, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s %q: only loopback addresses are load-tested", flag, addr)
	}
	return nil
}

// result is one run's figures.
type result struct {
	label    string
	requests int
	elapsed  time.Duration
	p50, p99 time.Duration
	codes    map[string]int
}

func (r result) String() string {
	keys := slices.Sorted(maps.Keys(r.codes))
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, r.codes[k])
	}
	return fmt.Sprintf("%-34s %9d req %10.0f req/s   p50 %8v   p99 %8v  %s", r.label, r.requests,
		float64(r.requests)/r.elapsed.Seconds(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), b.String())
}

// caller sends request i and returns its outcome's name.
type caller func(ctx context.Context, i int) (string, error)

func runLoad(ctx context.Context, o options) (result, error) {
	// Clients stop sending at -duration; a call in flight then finishes,
	// within 10 s more. (A call given the run's own deadline would fail
	// with DeadlineExceeded near the end, and be counted as an error.)
	hard := o.duration + 10*time.Second
	ctx, cancel := context.WithTimeout(ctx, hard)
	defer cancel()
	callers, closeFn, err := newCallers(o, time.Now().Add(hard))
	if err != nil {
		return result{}, err
	}
	defer closeFn()
	// Warm up: connections and scripts.
	for w, call := range callers {
		if _, err := call(ctx, w); err != nil {
			return result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	var next atomic.Int64
	var over atomic.Bool
	lat := make([][]time.Duration, o.conc)
	codes := make([]map[string]int, o.conc)
	var wg sync.WaitGroup
	start := time.Now()
	timer := time.AfterFunc(o.duration, func() { over.Store(true) })
	defer timer.Stop()
	// With -rate, client w sends at start + (w + k*conc) / rate: the
	// clients' instants interleave evenly.
	var every time.Duration
	if o.rate > 0 {
		every = time.Duration(float64(o.conc) / o.rate * float64(time.Second))
	}
	for w := range o.conc {
		lat[w] = make([]time.Duration, 0, min(o.n/o.conc+1, 1<<16))
		codes[w] = map[string]int{}
		call := callers[w]
		due := start.Add(every * time.Duration(w) / time.Duration(o.conc))
		wg.Go(func() {
			for !over.Load() && ctx.Err() == nil {
				i := next.Add(1) - 1
				if int(i) >= o.n {
					return
				}
				t := time.Now()
				if every > 0 {
					if wait := due.Sub(t); wait > 0 {
						time.Sleep(wait)
					}
					t, due = due, due.Add(every)
				}
				code, err := call(ctx, int(i))
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					if code == "" {
						code = "error"
					}
				}
				lat[w] = append(lat[w], time.Since(t))
				codes[w][code]++
			}
		})
	}
	wg.Wait()
	r := result{label: o.label, elapsed: time.Since(start), codes: map[string]int{}}
	var all []time.Duration
	for w := range lat {
		all = append(all, lat[w]...)
		for k, v := range codes[w] {
			r.codes[k] += v
		}
	}
	r.requests = len(all)
	if r.requests == 0 {
		return r, errors.New("no request completed")
	}
	slices.Sort(all)
	r.p50, r.p99 = all[len(all)*50/100], all[min(len(all)*99/100, len(all)-1)]
	return r, nil
}

// newCallers returns one caller per client; no read or write outlasts
// deadline.
func newCallers(o options, deadline time.Time) ([]caller, func(), error) {
	keys := make([]string, o.keys)
	for i := range keys {
		keys[i] = "load-" + strconv.Itoa(i)
	}
	return newCallersFor(o, deadline, keys)
}

// rlsRequest is the ShouldRateLimit request for key: one descriptor of one
// entry, descriptor = key, in domain.
func rlsRequest(domain, descriptor, key string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: domain, Descriptors: []*extv3.RateLimitDescriptor{{Entries: []*extv3.RateLimitDescriptor_Entry{{Key: descriptor, Value: key}}}}}
}

// newCallersFor is newCallers over the given keys, request i using key i
// modulo their number.
func newCallersFor(o options, deadline time.Time, keys []string) ([]caller, func(), error) {
	callers := make([]caller, o.conc)
	same := func(c caller) []caller {
		for w := range callers {
			callers[w] = c
		}
		return callers
	}
	switch {
	case o.mode == "grpc" && o.client == "raw":
		h, err := dialH2(o.target, deadline, o.grpcTimeout, o.tls)
		if err != nil {
			return nil, nil, err
		}
		msgs := make([][]byte, len(keys))
		for i, k := range keys {
			m, err := proto.Marshal(rlsRequest(o.domain, o.descriptor, k))
			if err != nil {
				h.close()
				return nil, nil, err
			}
			msgs[i] = grpcMessage(m)
		}
		return same(func(_ context.Context, i int) (string, error) {
			return h.call(msgs[i%len(msgs)])
		}), h.close, nil
	case o.mode == "grpc":
		creds := insecure.NewCredentials()
		if o.tls != nil {
			creds = credentials.NewTLS(o.tls)
		}
		conn, err := grpc.NewClient(o.target, grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, nil, err
		}
		c := rlsv3.NewRateLimitServiceClient(conn)
		reqs := make([]*rlsv3.RateLimitRequest, len(keys))
		for i, k := range keys {
			reqs[i] = rlsRequest(o.domain, o.descriptor, k)
		}
		return same(func(ctx context.Context, i int) (string, error) {
			if o.grpcTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, o.grpcTimeout)
				defer cancel()
			}
			res, err := c.ShouldRateLimit(ctx, reqs[i%len(reqs)])
			if err != nil {
				return "error:" + status.Code(err).String(), err
			}
			return res.OverallCode.String(), nil
		}), func() { conn.Close() }, nil
	}
	path := "/v1/check"
	switch o.mode {
	case "json":
		path = "/json"
	case "forward":
		path = "/v1/forward-auth/" + o.endpoint
	}
	bodies := make([][]byte, len(keys))
	for i, k := range keys {
		switch {
		case o.mode == "forward":
			bodies[i] = nil // a GET; the key is the address of forwardFor(i)
		case o.mode == "json":
			bodies[i] = fmt.Appendf(nil, `{"domain":%q,"descriptors":[{"entries":[{"key":%q,"value":%q}]}]}`, o.domain, o.descriptor, k)
		default:
			bodies[i] = fmt.Appendf(nil, `{"key":%q,"policies":[%q]}`, k, o.policy)
		}
	}
	if o.client == "raw" {
		reqs := make([][]byte, len(bodies))
		for i, b := range bodies {
			reqs[i] = rawRequest(o.target, path, b)
			if o.mode == "forward" {
				reqs[i] = fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ratelimit-load\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /\r\nX-Forwarded-For: %s\r\n\r\n", path, o.target, forwardFor(i))
			}
		}
		conns := make([]*rawConn, o.conc)
		for w := range callers {
			rc := &rawConn{addr: o.target, deadline: deadline, tls: o.tls}
			conns[w] = rc
			callers[w] = func(_ context.Context, i int) (string, error) {
				code, err := rc.do(reqs[i%len(reqs)])
				if err != nil {
					return "", err
				}
				return strconv.Itoa(code), nil
			}
		}
		return callers, func() {
			for _, rc := range conns {
				rc.close()
			}
		}, nil
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.conc, MaxConnsPerHost: o.conc, TLSClientConfig: o.tls}, Timeout: 10 * time.Second}
	url := "http://" + o.target + path
	if o.tls != nil {
		url = "https://" + o.target + path
	}
	return same(func(ctx context.Context, i int) (string, error) {
		var req *http.Request
		var err error
		if o.mode == "forward" {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err == nil {
				req.Header.Set("X-Forwarded-Method", "GET")
				req.Header.Set("X-Forwarded-Uri", "/")
				req.Header.Set("X-Forwarded-For", forwardFor(i%len(bodies)))
			}
		} else {
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bodies[i%len(bodies)]))
			req.Header.Set("Content-Type", "application/json")
		}
		if err != nil {
			return "", err
		}
		res, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return strconv.Itoa(res.StatusCode), nil
	}), hc.CloseIdleConnections, nil
}

// forwardFor is the client address of key i in -mode forward: 10.0.0.0/8
// counted up, so that keys are distinct addresses.
func forwardFor(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
}

// clientTLS is the TLS configuration of -tls.
func clientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-ca %s: no PEM certificate", caFile)
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("-cert and -key go together")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("-cert, -key: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
