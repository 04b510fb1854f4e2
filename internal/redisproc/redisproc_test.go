//go:build unix

package redisproc_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/redisproc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLifecycle: a server answers, hangs while paused, answers again when
// resumed, refuses when stopped, and comes back empty on restart.
func TestLifecycle(t *testing.T) {
	s := redisproc.Start(t, "maxmemory 4mb")
	c := s.Client()
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; v != "4194304" {
		t.Fatalf("maxmemory = %q: extra config not applied", v)
	}
	pid := s.PID()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("PID %d is not a live process: %v", pid, err)
	}

	s.Pause()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := c.Get(short, "k").Err()
	cancel()
	var ne net.Error
	if err == nil || !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("paused server: %v, want a timeout", err)
	}
	s.Resume()
	waitOK(t, func() error { return c.Get(ctx, "k").Err() })

	s.Restart()
	if s.PID() == pid {
		t.Fatal("restart kept the PID")
	}
	waitOK(t, func() error {
		err := c.Get(ctx, "k").Err()
		if err == nil {
			return errors.New("the key survived the restart")
		}
		if err.Error() == "redis: nil" {
			return nil
		}
		return err
	})

	s.Stop()
	if s.PID() != 0 {
		t.Fatal("stopped server has a PID")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the first process (PID %d) still exists after Restart and Stop: %v", pid, err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("stopped server answers")
	}
}

// TestKillPaused: a paused server can be killed and stopped.
func TestKillPaused(t *testing.T) {
	s := redisproc.Start(t)
	s.Pause()
	s.Kill()
	s.Stop() // already stopped: nothing to do
	if s.PID() != 0 {
		t.Fatal("killed server has a PID")
	}
}

func waitOK(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
