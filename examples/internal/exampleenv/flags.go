package exampleenv

import (
	"flag"
	"io"
)

// DefaultAddr is the listen address of the examples unless -addr says
// otherwise: loopback only.
const DefaultAddr = "127.0.0.1:8080"

// Flags are the examples' command-line settings.
type Flags struct {
	// Addr is the listen address, -addr; default DefaultAddr.
	Addr string
	// RedisURL is the Redis to keep rate-limit state in, -redis
	// ("redis://127.0.0.1:6379/0"); "" keeps it in memory.
	RedisURL string
}

// ParseFlags parses the arguments of the example called name. Usage and
// errors go to out; -h gives flag.ErrHelp.
func ParseFlags(name string, args []string, out io.Writer) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Addr, "addr", DefaultAddr, "listen address")
	fs.StringVar(&f.RedisURL, "redis", "", "Redis URL for shared rate-limit state, e.g. redis://127.0.0.1:6379/0 (default: in memory)")
	err := fs.Parse(args)
	return f, err
}
