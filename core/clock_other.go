//go:build !(linux && amd64)

package core

import "time"

// wallNow is time.Now where gettimeofday has no vDSO fast path in Go.
func wallNow() time.Time { return time.Now() }
