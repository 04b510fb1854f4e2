package policymap

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

// Equal agrees with == on every field, whether or not the strings of
// the two policies share their bytes.
func TestEqualIsEquality(t *testing.T) {
	t.Parallel()
	base := core.Policy{Name: "api", Limit: 10, Window: time.Second, Burst: 3, Algorithm: core.LeakyBucket, MaxDelay: time.Millisecond}
	variants := []func(p *core.Policy){
		func(p *core.Policy) {},
		func(p *core.Policy) { p.Name = strings.Clone(p.Name) },
		func(p *core.Policy) { p.Algorithm = core.Algorithm(strings.Clone(string(p.Algorithm))) },
		func(p *core.Policy) { p.Name = "apI" },
		func(p *core.Policy) { p.Name = "" },
		func(p *core.Policy) { p.Limit++ },
		func(p *core.Policy) { p.Window += time.Microsecond },
		func(p *core.Policy) { p.Burst = 0 },
		func(p *core.Policy) { p.Algorithm = core.GCRA },
		func(p *core.Policy) { p.Algorithm = "" },
		func(p *core.Policy) { p.MaxDelay = 0 },
		func(p *core.Policy) { p.Shadow = true },
	}
	for i, vi := range variants {
		for j, vj := range variants {
			a, b := base, base
			vi(&a)
			vj(&b)
			if got, want := Equal(&a, &b), a == b; got != want {
				t.Errorf("variants %d and %d: Equal %v, == %v", i, j, got, want)
			}
		}
	}
}

// Equal compares every field of core.Policy: a field added to Policy and
// not to Equal fails here.
func TestEqualSeesEveryField(t *testing.T) {
	t.Parallel()
	base := core.Policy{Name: "api", Limit: 10, Window: time.Second, Burst: 3, Algorithm: core.LeakyBucket, MaxDelay: time.Millisecond}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		b := base
		f := reflect.ValueOf(&b).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		default:
			t.Fatalf("Policy.%s is a %s: teach Equal and this test about it", typ.Field(i).Name, f.Kind())
		}
		if Equal(&base, &b) {
			t.Errorf("Equal misses a change of Policy.%s", typ.Field(i).Name)
		}
	}
}
