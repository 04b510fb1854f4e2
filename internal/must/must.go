// Package must unwraps a constructor's result in tests and benchmarks,
// where a construction error is a bug of the test: it panics with it.
package must

// Do returns v, or panics with err when it is not nil.
func Do[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
