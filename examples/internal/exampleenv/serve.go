package exampleenv

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ServeHTTP serves h on ln until ctx is done, then shuts the server down,
// giving requests in flight up to 5 s to finish. It returns nil after a
// shutdown, or the error that stopped the server. It closes ln.
func ServeHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelShutdown()
		stopped <- srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	cancel()
	shutdownErr := <-stopped
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return shutdownErr
}
