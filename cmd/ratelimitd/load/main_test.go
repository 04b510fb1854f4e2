package main

import (
	"strings"
	"testing"
)

func TestParseRefusesNonLoopback(t *testing.T) {
	for _, target := range []string{"10.0.0.1:8080", "192.168.1.2:80", "example.com:80", "8.8.8.8:53"} {
		if _, err := parse([]string{"-target", target}); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("-target %s: %v", target, err)
		}
	}
	for _, target := range []string{"127.0.0.1:8080", "[::1]:8081", "localhost:9"} {
		if _, err := parse([]string{"-target", target}); err != nil {
			t.Errorf("-target %s: %v", target, err)
		}
	}
	for _, args := range [][]string{{"-mode", "udp"}, {"-c", "0"}, {"-n", "0"}, {"-duration", "1h"}} {
		if _, err := parse(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestFloor: the do-nothing servers answer the generator's requests.
func TestFloor(t *testing.T) {
	for _, mode := range []string{"http", "grpc"} {
		addr, stop, err := startFloor(mode)
		if err != nil {
			t.Fatal(err)
		}
		o, err := parse([]string{"-mode", mode, "-target", addr, "-c", "4", "-n", "200"})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runLoad(t.Context(), o)
		stop()
		if err != nil || r.requests != 200 || r.codes["error"] != 0 {
			t.Fatalf("%s: %v %+v", mode, err, r)
		}
	}
}
