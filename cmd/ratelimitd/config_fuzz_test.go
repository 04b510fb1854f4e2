package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfigFile: any content of a configuration file or of a domain file
// loads or is refused with a *configError (file, line and field where
// known); it never panics or hangs. Configurations that name domain files
// are skipped: their patterns would read whatever files the fuzzer spells.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte(strings.Replace(mainConfig("memory"), "files:", "#", 1)), false)
	f.Add([]byte("backend:\n  url: redis://127.0.0.1:1/0\n  deny_cache: 10\npolicies:\n  a: \"1/s;burst=3;algorithm=gcra\"\nenvoy:\n  domains:\n    - domain: x\n      descriptors: [{key: k, rate_limit: {unit: second, requests_per_unit: 1}}]\n"), false)
	f.Add([]byte(domainYAML("d")), true)
	f.Add([]byte("domain: d\ndescriptors:\n  - key: a\n    value: b*\n    descriptors:\n      - key: c\n        rate_limit: {unit: minute, requests_per_unit: 3, window: 90s, burst: 2}\n"), true)
	f.Fuzz(func(t *testing.T, raw []byte, domain bool) {
		if !domain && bytes.Contains(raw, []byte("files")) {
			t.Skip()
		}
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		if domain {
			_, err = loadDomainFile(p)
		} else {
			_, err = loadConfig(p, "")
		}
		if _, ok := errors.AsType[*configError](err); err != nil && !ok {
			t.Fatalf("%q: an error that is not a configuration error: %v", raw, err)
		}
	})
}
