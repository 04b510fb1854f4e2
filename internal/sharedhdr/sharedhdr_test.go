package sharedhdr_test

import (
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit/internal/sharedhdr"
)

func TestSliceIsSharedUntilWrittenInto(t *testing.T) {
	t.Parallel()
	v := sharedhdr.New("nosniff")
	a, b := v.Slice(), v.Slice()
	if len(a) != 1 || cap(a) != 1 || a[0] != "nosniff" || &a[0] != &b[0] {
		t.Fatalf("slices %q (cap %d) and %q: want one shared one-element slice", a, cap(a), b)
	}

	// What http.Header's methods do leaves the shared slice as it was.
	h := http.Header{"X-Content-Type-Options": a}
	h.Add("X-Content-Type-Options", "other")
	h.Set("X-Content-Type-Options", "set")
	if c := v.Slice(); &c[0] != &a[0] || c[0] != "nosniff" {
		t.Fatalf("after Add and Set the slice is %q", c)
	}

	// A write in place is seen, and the value handed out again is true.
	a[0] = "tampered"
	c := v.Slice()
	if c[0] != "nosniff" || &c[0] == &a[0] {
		t.Fatalf("after a write in place: %q", c)
	}
	// Even a write of an equal string from elsewhere: what is checked is
	// that the slice still holds the Value's own string.
	c[0] = string([]byte("nosniff"))
	if d := v.Slice(); &d[0] == &c[0] {
		t.Fatal("a slice holding a copy of the value was kept")
	}
	if v.String() != "nosniff" {
		t.Fatalf("String %q", v.String())
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	v := sharedhdr.New("1")
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 1000 {
				if s := v.Slice(); s[0] != "1" {
					t.Errorf("slice %q", s)
				}
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}
