package redisstore

import (
	"strings"
	"testing"
)

// TestScriptNeverFormatsNumbers guards the rule real Redis enforces and
// miniredis does not: Lua's tostring and the .. operator print numbers with
// %.14g, which mangles microsecond timestamps, so the script must use
// neither (comments aside). It also must not create globals, which Redis
// refuses.
func TestScriptNeverFormatsNumbers(t *testing.T) {
	t.Parallel()
	for i, line := range strings.Split(scriptSource(), "\n") {
		code, _, _ := strings.Cut(line, "--")
		if strings.Contains(code, "tostring") || strings.Contains(code, "..") {
			t.Errorf("script line %d formats a value as text: %s", i+1, line)
		}
		trimmed := strings.TrimSpace(code)
		if strings.HasPrefix(trimmed, "function ") {
			t.Errorf("script line %d defines a global function: %s", i+1, line)
		}
	}
}
