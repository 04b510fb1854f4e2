package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyTimeout bounds the wait for a server to accept commands.
const readyTimeout = 10 * time.Second

// Require returns the path of redis-server. When it is not installed it
// skips t, or fails it under CI=true.
func Require(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redisproc: redis-server is not installed and CI=true: the fault tests need it (apt-get install redis-server)")
		}
		t.Skipf("redisproc: redis-server is not installed; install it (apt-get install redis-server) to run this fault test")
	}
	return path
}

// Server is one redis-server process started by a test. Its methods are
// safe for concurrent use; they fail the test on error.
type Server struct {
	// Addr is the server's "127.0.0.1:port".
	Addr string
	// Port is the server's port.
	Port int
	// Dir is the server's working directory, inside the test's TempDir.
	Dir string

	t    testing.TB
	bin  string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	paused bool
}

// Start starts a standalone redis-server with the given extra configuration
// directives ("maxmemory 1mb", "maxmemory-policy noeviction", ...) and waits
// until it answers PING. It is stopped when t ends.
func Start(t testing.TB, config ...string) *Server {
	t.Helper()
	return start(t, false, config)
}

// start starts redis-server, as a Sentinel when sentinel is true. A port
// found free may be taken before the server binds it; start then retries on
// another.
func start(t testing.TB, sentinel bool, config []string) *Server {
	t.Helper()
	bin := Require(t)
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redisproc: no free port: %v", err)
		}
		dir := filepath.Join(t.TempDir(), "redis-"+strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, t: t, bin: bin}
		conf := []string{
			"port " + strconv.Itoa(port),
			"bind 127.0.0.1",
			"dir " + dir,
			"logfile " + filepath.Join(dir, "redis.log"),
			"daemonize no",
			"protected-mode no",
		}
		if !sentinel {
			conf = append(conf, `save ""`, "appendonly no")
		}
		conf = append(conf, config...)
		confPath := filepath.Join(dir, "redis.conf")
		if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.args = []string{confPath}
		if sentinel {
			s.args = append(s.args, "--sentinel")
		}
		if lastErr = s.launch(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redisproc: could not start redis-server: %v", lastErr)
	return nil
}

// freePort returns a loopback port that is free, and whose cluster bus port
// (port+10000) is free too.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, errors.New("no port with a free bus port found")
}

// launch starts the process and waits until it answers PING.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited, s.paused = cmd, exited, false
	s.mu.Unlock()
	deadline := time.Now().Add(readyTimeout)
	for {
		err := s.ping()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start: %s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server at %s did not answer within %v: %v", s.Addr, readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends one PING on a fresh connection.
func (s *Server) ping() error {
	c := s.Client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return c.Ping(ctx).Err()
}

// logTail returns the end of the server's log, for error messages.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Client returns a new client of the server with short timeouts and no
// retries, for setting up and inspecting. The caller closes it.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: s.Addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 2,
	})
}

// PID returns the process id, or 0 when the server is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// signal sends sig to the running process.
func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redisproc: %s is not running", s.Addr)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redisproc: signal %v to %s: %v", sig, s.Addr, err)
	}
	switch sig {
	case sigStop:
		s.paused = true
	case sigCont:
		s.paused = false
	}
}

// Pause stops the process with SIGSTOP: the port stays open and
// connections hang, as with a server stuck in a long command or a frozen VM.
func (s *Server) Pause() { s.signal(sigStop) }

// Resume continues a paused process with SIGCONT; it then serves what was
// queued while it was paused.
func (s *Server) Resume() { s.signal(sigCont) }

// Kill kills the process with SIGKILL and waits for it to exit: no
// shutdown, as with a crash.
func (s *Server) Kill() { s.halt(syscall.SIGKILL) }

// Stop stops the process with SIGTERM (resuming it first if paused), waits
// for it to exit, and kills it if it has not after a few seconds. Stopping a
// stopped server does nothing.
func (s *Server) Stop() { s.halt(syscall.SIGTERM) }

func (s *Server) halt(sig syscall.Signal) {
	s.mu.Lock()
	cmd, exited, paused := s.cmd, s.exited, s.paused
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if paused && sig != syscall.SIGKILL {
		_ = cmd.Process.Signal(sigCont)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Restart stops the server and starts it again on the same port and
// directory, with an empty dataset (persistence is off). It waits until the
// server answers PING.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	var err error
	for range 20 { // the port may linger for a moment
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redisproc: restart %s: %v", s.Addr, err)
}
