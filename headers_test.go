package ratelimit

import (
	"strconv"
	"testing"
)

func TestHeaderModeString(t *testing.T) {
	t.Parallel()
	if HeaderMode(9).String() != "HeaderMode("+strconv.Itoa(9)+")" {
		t.Error("String of an unknown mode")
	}
}
