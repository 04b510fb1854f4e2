package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/sink"
)

// The tests of this file run ratelimitd behind the real proxies, each
// started on loopback ports with a generated configuration, in front of
// a small upstream. A missing proxy binary skips them, or fails them when
// CI=true.

// needBinary returns the path of the named program.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed and CI=true: the forward-auth tests need it (.ci/run installs it with apt-get)", name)
		}
		t.Skipf("%s is not installed; install it (apt-get install %s) to run this test", name, name)
	}
	return p
}

// freePort returns a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// upstream is the application behind the proxy; it counts what reaches it.
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		_, _ = io.WriteString(w, "upstream\n")
	}))
	t.Cleanup(u.Close)
	return u
}

// startProxy runs a proxy until the test ends, waiting until addr accepts
// connections.
func startProxy(t *testing.T, addr string, cmd *exec.Cmd) {
	t.Helper()
	var out sink.Log
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", cmd.Path, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s:\n%s", cmd.Path, addr, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// proxyConfig is the service's configuration for the proxy tests: 3
// requests a minute per client on every path, answered 403 on the nginx
// endpoint and 429 on the others.
const proxyConfig = `
policies:
  page: "3/1m"
forward_auth:
  nginx:
    deny_status: 403
    trusted_proxies: ["127.0.0.1"]
    client_ip_headers: [X-Real-IP]
    rules:
      "/": {policies: [page]}
  edge:
    trusted_proxies: ["127.0.0.1"]
    rules:
      "/": {policies: [page]}
`

// checkBehindProxy sends requests through the proxy at addr: three are
// admitted with the RateLimit fields and reach the upstream once each, the
// fourth is a 429 with Retry-After and the fields and does not reach it;
// with ratelimitd stopped the proxy answers down (a 5xx) and still
// forwards nothing.
func checkBehindProxy(t *testing.T, in *instance, up *upstream, addr, path string, down int) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	get := func() (*http.Response, string) {
		t.Helper()
		res, err := c.Post("http://"+addr+path, "text/plain", strings.NewReader("a body the check never sees"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for i := range 3 {
		res, body := get()
		if res.StatusCode != 200 || body != "upstream\n" {
			t.Fatalf("request %d: %d %q", i+1, res.StatusCode, body)
		}
		if want := fmt.Sprintf(`"page";r=%d;`, 2-i); !strings.Contains(res.Header.Get("RateLimit"), want) || res.Header.Get("RateLimit-Policy") != `"page";q=3;w=60` {
			t.Errorf("request %d: fields %q %q, want %s", i+1, res.Header.Get("RateLimit"), res.Header.Get("RateLimit-Policy"), want)
		}
	}
	res, body := get()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(res.Header.Get("RateLimit"), `"page";r=0;`) {
		t.Fatalf("request 4: %d %v %q", res.StatusCode, res.Header, body)
	}
	if n := up.hits.Load(); n != 3 {
		t.Fatalf("the upstream saw %d requests, want the 3 admitted", n)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	if res, _ := get(); res.StatusCode != down {
		t.Errorf("ratelimitd stopped: %d, want %d", res.StatusCode, down)
	}
	if n := up.hits.Load(); n != 3 {
		t.Errorf("ratelimitd stopped: the upstream saw %d requests, want 3", n)
	}
}

// nginxConfig is a whole nginx configuration for the test: the server
// block of docs/forward-auth.md, listening on listen, with the test's
// addresses of ratelimitd and the application.
func nginxConfig(dir, listen, ratelimitd, app string) string {
	server := strings.NewReplacer("listen 80;", "listen "+listen+";", "127.0.0.1:8080", ratelimitd, "127.0.0.1:3000", app).Replace(nginxServer)
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr info;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi;
  uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
%[2]s}
`, dir, server)
}

// nginxServer is docs/forward-auth.md's nginx configuration, verbatim
// (TestForwardAuthDocs): ratelimitd on 127.0.0.1:8080, the application on
// 127.0.0.1:3000.
const nginxServer = `upstream ratelimitd {
  server 127.0.0.1:8080;
  keepalive 16;
}
server {
  listen 80;
  auth_request /_ratelimit;
  auth_request_set $rl_limit $rl_limit$upstream_http_ratelimit;
  auth_request_set $rl_policy $rl_policy$upstream_http_ratelimit_policy;
  auth_request_set $rl_retry $upstream_http_retry_after;
  add_header RateLimit $rl_limit always;
  add_header RateLimit-Policy $rl_policy always;
  error_page 403 = @ratelimited;
  uninitialized_variable_warn off;

  location = /_ratelimit {
    internal;
    if ($rl_checked) { return 204; }   # an internal redirect: checked already
    set $rl_checked 1;
    proxy_pass http://ratelimitd/v1/forward-auth/nginx;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_pass_request_body off;
    proxy_set_header Content-Length "";
    proxy_set_header X-Original-Method $request_method;
    proxy_set_header X-Original-URI $request_uri;
    proxy_set_header X-Forwarded-Host $host;
    proxy_set_header X-Real-IP $remote_addr;
  }
  location @ratelimited {
    auth_request off;
    add_header Retry-After $rl_retry always;
    add_header RateLimit $rl_limit always;
    add_header RateLimit-Policy $rl_policy always;
    default_type application/problem+json;
    return 429 '{"title":"Too Many Requests","status":429,"detail":"retry after the number of seconds in Retry-After"}';
  }

  location / {
    try_files $uri @app;   # an internal redirect, checked once all the same
  }
  location @app {
    proxy_pass http://127.0.0.1:3000;
  }
}
`

// testBehindProxy starts ratelimitd with proxyConfig, an upstream, and the
// proxy command returns, once the proxy's configuration, config(dir,
// listen, ratelimitd, upstream), is written to dir/file; then it checks
// the proxy's answers on path (checkBehindProxy).
func testBehindProxy(t *testing.T, file string, config func(dir, listen, ratelimitd, app string) string, command func(dir, conf string) *exec.Cmd, path string, down int) {
	in := start(t, "-config", writeConfig(t, "c.yaml", proxyConfig))
	up := newUpstream(t)
	dir := t.TempDir()
	listen := freePort(t)
	conf := filepath.Join(dir, file)
	if err := os.WriteFile(conf, []byte(config(dir, listen, in.addrs.HTTP, up.Listener.Addr().String())), 0o600); err != nil {
		t.Fatal(err)
	}
	startProxy(t, listen, command(dir, conf))
	checkBehindProxy(t, in, up, listen, path, down)
}

// TestBehindNginx: nginx's auth_request in front of ratelimitd. nginx
// answers 500 when its auth request fails: closed.
func TestBehindNginx(t *testing.T) {
	bin := needBinary(t, "nginx")
	testBehindProxy(t, "nginx.conf", nginxConfig, func(dir, conf string) *exec.Cmd {
		return exec.Command(bin, "-c", conf, "-p", dir, "-e", "stderr")
	}, "/page", http.StatusInternalServerError)
}

// caddyfile is docs/forward-auth.md's Caddy configuration with the
// test's addresses (Caddy keeps its state under HOME, not dir).
func caddyfile(_, listen, ratelimitd, app string) string {
	return "{\n\tadmin off\n\tauto_https off\n}\n" + strings.NewReplacer("example.com", "http://"+listen, "127.0.0.1:8080", ratelimitd, "127.0.0.1:3000", app).Replace(caddySite)
}

// caddySite is docs/forward-auth.md's Caddyfile, verbatim
// (TestForwardAuthDocs).
const caddySite = `example.com {
	route {
		forward_auth 127.0.0.1:8080 {
			uri /v1/forward-auth/edge
			copy_headers RateLimit RateLimit-Policy
		}
		header RateLimit {http.request.header.RateLimit}
		header RateLimit-Policy {http.request.header.RateLimit-Policy}
		reverse_proxy 127.0.0.1:3000
	}
}
`

// TestBehindCaddy: Caddy's forward_auth in front of ratelimitd. Caddy
// answers 502 when the auth request fails: closed.
func TestBehindCaddy(t *testing.T) {
	bin := needBinary(t, "caddy")
	testBehindProxy(t, "Caddyfile", caddyfile, func(dir, conf string) *exec.Cmd {
		cmd := exec.Command(bin, "run", "--config", conf, "--adapter", "caddyfile")
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
		return cmd
	}, "/page?q=1", http.StatusBadGateway)
}
