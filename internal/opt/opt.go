// Package opt applies the options rule of every package of the project: a
// zero value means the default, and a value out of range is an error naming
// the option, returned by the constructor.
package opt

import "fmt"

// Errs keeps the first invalid option of a constructor; Pkg prefixes its
// message.
type Errs struct {
	Pkg string
	Err error
}

// Fail records an invalid option, unless one was recorded before.
func (e *Errs) Fail(format string, args ...any) {
	if e.Err == nil {
		e.Err = fmt.Errorf(e.Pkg+": "+format, args...)
	}
}

// Count sets *dst to v, or to def when v is zero; a negative v is an error
// naming the option.
func Count[T ~int | ~int64](e *Errs, dst *T, name string, v, def T) {
	switch {
	case v < 0:
		e.Fail("%s(%v): want 0 (the default) or more", name, v)
	case v == 0:
		*dst = def
	default:
		*dst = v
	}
}

// Apply calls every option of opts on c, in order, passing over nil ones.
func Apply[C any, O ~func(C)](c C, opts []O) {
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
}
