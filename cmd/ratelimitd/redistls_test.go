package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"github.com/ratelimit-go/ratelimit/internal/sink"
	"github.com/ratelimit-go/ratelimit/internal/testcerts"
)

// tlsRedis is a real redis-server speaking TLS, with certificates of ca
// and docs/redis.md's ACL user (password pw), minus the commands in drop.
func tlsRedis(t *testing.T, ca *testcerts.CA, pw string, drop ...string) (addr string) {
	t.Helper()
	_, addr = redisproc.StartTLS(t, ca, redisproc.StoreACL("ratelimit", pw, "ratelimit:", drop...))
	return addr
}

// TestRedisTLSAndACL: the service reaches a Redis over TLS as an ACL user
// allowed only what the store sends; a wrong CA, a wrong password or a
// missing permission fails the start at once with what is wrong, whatever
// on_failure says, and names no secret.
func TestRedisTLSAndACL(t *testing.T) {
	ca := testcerts.NewCA(t, "test")
	const pw = "s3cret-redis-password"
	addr := tlsRedis(t, ca, pw)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "redis-password")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := ca.Client("ratelimitd")
	config := func(url, caFile, extra string) string {
		return "backend:\n  url: " + url + "\n  password_file: " + pwFile + "\n  on_failure: fallback\n  tls:\n    ca_file: " + caFile +
			"\n    cert_file: " + client.CertFile + "\n    key_file: " + client.KeyFile + "\n" + extra +
			"policies:\n  api: \"2/1m;algorithm=fixed_window\"\n"
	}

	t.Run("works", func(t *testing.T) {
		in := start(t, "-config", writeConfig(t, "c.yaml", config("rediss://ratelimit@"+addr+"/0", ca.File, "")))
		key := randomName(t)
		for i, want := range []int{200, 200, 429} {
			if code, _, _ := in.check(key, "api"); code != want {
				t.Fatalf("check %d: %d, want %d\n%s", i+1, code, want, in.logs)
			}
		}
		if code, _, body := in.do("GET", "/readyz", "", ""); code != 200 {
			t.Fatalf("readyz: %d %s", code, body)
		}
		if strings.Contains(in.logs.String(), pw) {
			t.Errorf("the logs carry the password:\n%s", in.logs)
		}
		if !strings.Contains(in.logs.String(), "over TLS") {
			t.Errorf("the logs do not say TLS:\n%s", in.logs)
		}
	})

	t.Run("cluster", func(t *testing.T) {
		_, addrs := redisproc.StartClusterTLS(t, ca, 3, 2*time.Second, redisproc.StoreACL("ratelimit", pw, "ratelimit:")+" +cluster|slots")
		in := start(t, "-config", writeConfig(t, "c.yaml", config("redis-cluster://ratelimit@"+strings.Join(addrs, ","), ca.File, "")))
		key := randomName(t)
		for i, want := range []int{200, 200, 429} {
			if code, _, _ := in.check(key, "api"); code != want {
				t.Fatalf("check %d: %d, want %d\n%s", i+1, code, want, in.logs)
			}
		}
		if !strings.Contains(in.logs.String(), "cluster "+strings.Join(addrs, ",")+" over TLS") {
			t.Errorf("the logs do not name the cluster over TLS:\n%s", in.logs)
		}
	})

	other := testcerts.NewCA(t, "other")
	for _, tc := range []struct {
		name, config, want string
		drop               []string
	}{
		{"wrong CA", config("rediss://ratelimit@"+addr+"/0", other.File, ""), "TLS: the server's certificate is not trusted", nil},
		{"wrong password", strings.Replace(config("rediss://ratelimit@"+addr+"/0", ca.File, ""), "password_file: "+pwFile, "password_env: RATELIMITD_TEST_WRONG_PW", 1), "refused the user name or password", nil},
		{"wrong server name", config("rediss://ratelimit@"+addr+"/0", ca.File, "    server_name: redis.example\n"), "TLS: the server's certificate is not trusted", nil},
		{"plaintext URL", config("redis://ratelimit@"+addr+"/0", ca.File, ""), "write rediss:// for TLS", nil},
		{"missing permission", config("rediss://ratelimit@"+addr+"/0", ca.File, ""), "lacks a permission the store needs: a command its script runs is refused", []string{"hset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RATELIMITD_TEST_WRONG_PW", "not-the-password")
			url := "rediss://ratelimit@" + addr + "/0"
			cfg := tc.config
			if tc.drop != nil {
				a := tlsRedis(t, ca, pw, tc.drop...)
				cfg = strings.Replace(cfg, url, "rediss://ratelimit@"+a+"/0", 1)
			}
			for _, mode := range []string{"fallback", "open", "closed"} {
				c := strings.Replace(cfg, "on_failure: fallback", "on_failure: "+mode, 1)
				var logs sink.Log
				// A start that does not fail serves until the context ends.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := run(ctx, []string{"-config", writeConfig(t, "c.yaml", c), "-http", "127.0.0.1:0", "-grpc", ""}, os.LookupEnv, &logs, nil, nil)
				cancel()
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("on_failure %s: %v, want %q\n%s", mode, err, tc.want, logs.String())
				}
				if strings.Contains(err.Error()+logs.String(), pw) || strings.Contains(err.Error()+logs.String(), "not-the-password") {
					t.Errorf("a secret is printed: %v\n%s", err, logs.String())
				}
			}
		})
	}
}
