package backendtest

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit/core"
)

// A vector file holds named vectors. Each vector parses its policies with
// core.ParsePolicy, sets a manual clock to start, and runs its steps.
type vectorFile struct {
	Vectors []vector `yaml:"vectors"`
}

type vector struct {
	Name     string       `yaml:"name"`
	Policies []string     `yaml:"policies"`
	Start    time.Time    `yaml:"start"`
	Steps    []vectorStep `yaml:"steps"`
}

// vectorStep is one step of a vector. Omitted fields take defaults: key "k",
// cost 1, op "check", all of the vector's policies, repeat 1. Expected
// fields that are omitted are not compared (the invariants still apply).
type vectorStep struct {
	Note    string        `yaml:"note"`
	Advance time.Duration `yaml:"advance"`
	Key     *string       `yaml:"key"`
	Cost    *int          `yaml:"cost"`
	Op      string        `yaml:"op"`
	// At is, for op refund, when the refunded charge was taken, from now;
	// for op charge, when the charge it renews was taken.
	At time.Duration `yaml:"at"`
	// Use selects the vector's policies by index, in the given order.
	Use []int `yaml:"use"`
	// RawPolicies replaces the policies with unparsed ones, to hand a
	// backend invalid policies that ParsePolicy would reject.
	RawPolicies []rawPolicy `yaml:"raw_policies"`
	Repeat      int         `yaml:"repeat"`
	// Allowed is the admission of the whole (multi-policy) check.
	Allowed *bool `yaml:"allowed"`
	// Want holds one expectation per policy; a single mapping is accepted
	// for a single policy.
	Want wants `yaml:"want"`
	// Error is the errorKind the step must fail with.
	Error string `yaml:"error"`
}

type rawPolicy struct {
	Name      string        `yaml:"name"`
	Limit     int           `yaml:"limit"`
	Window    time.Duration `yaml:"window"`
	Burst     int           `yaml:"burst"`
	Algorithm string        `yaml:"algorithm"`
}

type want struct {
	Allowed    *bool          `yaml:"allowed"`
	Remaining  *int           `yaml:"remaining"`
	RetryAfter *time.Duration `yaml:"retry_after"`
	ResetAfter *time.Duration `yaml:"reset_after"`
	Delay      *time.Duration `yaml:"delay"`
}

type wants []want

// UnmarshalYAML accepts either a list of expectations or a single one.
func (w *wants) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var one want
		if err := n.Decode(&one); err != nil {
			return err
		}
		*w = wants{one}
		return nil
	}
	var many []want
	if err := n.Decode(&many); err != nil {
		return err
	}
	*w = many
	return nil
}

// vectorFiles are embedded, so that the suite needs no source tree at run
// time.
//
//go:embed testdata/conformance/*.yaml
var vectorFiles embed.FS

// loadVectors reads and validates every embedded vector file.
func loadVectors(t *testing.T) map[string][]vector {
	t.Helper()
	files, err := fs.Glob(vectorFiles, "testdata/conformance/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files embedded (err %v)", err)
	}
	out := make(map[string][]vector, len(files))
	for _, f := range files {
		data, err := vectorFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		var vf vectorFile
		if err := dec.Decode(&vf); err != nil {
			t.Fatalf("%s: %v", path.Base(f), err)
		}
		if len(vf.Vectors) == 0 {
			t.Fatalf("%s: no vectors", path.Base(f))
		}
		out[strings.TrimSuffix(path.Base(f), ".yaml")] = vf.Vectors
	}
	return out
}

func runVectors(t *testing.T, newBackend Factory) {
	files := loadVectors(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t)
			for _, v := range files[name] {
				t.Run(v.Name, func(t *testing.T) { runVector(t, b, v) })
			}
		})
	}
}

func runVector(t *testing.T, b core.Backend, v vector) {
	policies := make([]core.Policy, len(v.Policies))
	for i, s := range v.Policies {
		p, err := core.ParsePolicy(s)
		if err != nil {
			t.Fatalf("vector policy %d %q: %v", i, s, err)
		}
		policies[i] = p
	}
	if v.Start.IsZero() || len(policies) == 0 || len(v.Steps) == 0 {
		t.Fatalf("vector needs start, policies and steps")
	}
	ctx := context.Background()
	prefix := keyPrefix(t)
	clock := core.NewManualClock(v.Start)
	lim := core.NewLimiter(b, core.WithClock(clock))
	n := 0
	for i, vs := range v.Steps {
		s, err := vs.step(prefix, policies)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		clock.Advance(vs.Advance)
		for r := 0; r < max(vs.Repeat, 1); r++ {
			n++
			where := fmt.Sprintf("step %d (#%d, repetition %d, %s) at %s", i, n, r, s.describe(), clock.Now().Format(time.RFC3339Nano))
			if vs.Note != "" {
				where += " [" + vs.Note + "]"
			}
			if vs.Error != "" {
				probe := Step{Key: s.Key, Policies: policies, Peek: true}
				if probe.Key == "" {
					probe.Key = prefix + "k"
				}
				before := perform(ctx, lim, clock, probe, false)
				o := perform(ctx, lim, clock, s, false)
				if got := errorKind(o.Err); got != vs.Error {
					t.Fatalf("%s: error %q (%v), want %s", where, got, o.Err, vs.Error)
				}
				after := perform(ctx, lim, clock, probe, false)
				if d := diffOutcome(before, after); d != "" {
					t.Fatalf("%s: the failed step changed the state: %s", where, d)
				}
				continue
			}
			o := perform(ctx, lim, clock, s, false)
			if o.Err != nil {
				t.Fatalf("%s: unexpected error %v", where, o.Err)
			}
			for _, msg := range checkInvariants(s, o) {
				t.Errorf("%s: %s", where, msg)
			}
			if vs.Allowed != nil && o.Allowed != *vs.Allowed {
				t.Errorf("%s: check allowed %v, want %v", where, o.Allowed, *vs.Allowed)
			}
			if len(vs.Want) > 0 && len(vs.Want) != len(o.Decisions) {
				t.Fatalf("%s: vector has %d expectations for %d decisions", where, len(vs.Want), len(o.Decisions))
			}
			for j, w := range vs.Want {
				if msg := w.mismatch(o.Decisions[j]); msg != "" {
					t.Errorf("%s: policy %d (%s): %s; got %s", where, j, s.Policies[j], msg, formatDecision(o.Decisions[j]))
				}
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
}

// step builds the Step a vector step describes.
func (vs vectorStep) step(prefix string, policies []core.Policy) (Step, error) {
	s := Step{Key: prefix + "k", Cost: 1}
	if vs.Key != nil {
		s.Key = *vs.Key
		if s.Key != "" {
			s.Key = prefix + s.Key
		}
	}
	if vs.Cost != nil {
		s.Cost = *vs.Cost
	}
	switch vs.Op {
	case "", "check":
	case "peek":
		s.Peek = true
	case "reset":
		s.Reset = true
	case "refund":
		s.adjust, s.at = core.OpRefund, vs.At
	case "charge":
		s.adjust, s.at = core.OpCharge, vs.At
	default:
		return s, fmt.Errorf("unknown op %q", vs.Op)
	}
	switch {
	case len(vs.RawPolicies) > 0:
		for _, r := range vs.RawPolicies {
			s.Policies = append(s.Policies, core.Policy{Name: r.Name, Limit: r.Limit, Window: r.Window, Burst: r.Burst, Algorithm: core.Algorithm(r.Algorithm)})
		}
	case len(vs.Use) > 0:
		for _, i := range vs.Use {
			if i < 0 || i >= len(policies) {
				return s, fmt.Errorf("use: no policy %d", i)
			}
			s.Policies = append(s.Policies, policies[i])
		}
	default:
		s.Policies = policies
	}
	if vs.Error == "" && vs.Op != "reset" && len(vs.Want) == 0 && vs.Allowed == nil {
		return s, errors.New("step expects nothing: give want, allowed or error")
	}
	return s, nil
}

// mismatch describes how d differs from the expectation, or returns "".
func (w want) mismatch(d core.Decision) string {
	var bad []string
	if w.Allowed != nil && d.Allowed != *w.Allowed {
		bad = append(bad, fmt.Sprintf("allowed %v, want %v", d.Allowed, *w.Allowed))
	}
	if w.Remaining != nil && d.Remaining != *w.Remaining {
		bad = append(bad, fmt.Sprintf("remaining %d, want %d", d.Remaining, *w.Remaining))
	}
	if w.RetryAfter != nil && d.RetryAfter != *w.RetryAfter {
		bad = append(bad, fmt.Sprintf("retry_after %v, want %v", d.RetryAfter, *w.RetryAfter))
	}
	if w.ResetAfter != nil && d.ResetAfter != *w.ResetAfter {
		bad = append(bad, fmt.Sprintf("reset_after %v, want %v", d.ResetAfter, *w.ResetAfter))
	}
	if w.Delay != nil && d.Delay != *w.Delay {
		bad = append(bad, fmt.Sprintf("delay %v, want %v", d.Delay, *w.Delay))
	}
	return strings.Join(bad, ", ")
}
