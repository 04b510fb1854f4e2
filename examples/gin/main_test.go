package main

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampletest"
)

func TestExample(t *testing.T) { exampletest.Suite(t, newApp, "gin", exampleenv.HTTP(newApp)) }
