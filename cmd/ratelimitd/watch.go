package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDelay gathers the events of one save (editors write, rename and
// chmod) into one reload.
const reloadDelay = 100 * time.Millisecond

// watch reloads the configuration when hup receives a signal and when the
// configuration file or a domain file changes, until ctx ends. It watches
// the files' directories, so that a file replaced by a rename (as editors
// and Kubernetes ConfigMaps do) is still seen. w is the watcher newWatcher
// returned (nil for none); watch closes it.
func (s *service) watch(ctx context.Context, hup <-chan os.Signal, w *fsnotify.Watcher) {
	var events <-chan fsnotify.Event
	if w != nil {
		defer w.Close()
		events = w.Events
	}
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if s.configPath != "" {
				_ = s.reload()
			}
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if s.relevant(ev.Name) {
				timer = time.After(reloadDelay)
			}
		case <-timer:
			timer = nil
			if s.reload() == nil && w != nil {
				s.watchDirs(w) // the new configuration may name files elsewhere
			}
		}
	}
}

// newWatcher returns a watcher of the configuration's directories, already
// watching, so that a change made once the service says it is serving is
// seen; nil without a configuration file or when the system refuses one.
func (s *service) newWatcher() *fsnotify.Watcher {
	if s.configPath == "" {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("cannot watch the configuration; reload with SIGHUP", "error", err.Error())
		return nil
	}
	s.watchDirs(w)
	return w
}

// watchDirs watches the directories of the configuration and domain files,
// and those of envoy.files' patterns, so that a new file matching one is
// seen too.
func (s *service) watchDirs(w *fsnotify.Watcher) {
	rt := s.cfg.Load()
	dirs := map[string]bool{filepath.Dir(s.configPath): true}
	for _, f := range rt.files {
		dirs[filepath.Dir(f)] = true
	}
	if rt.tls != nil {
		for _, f := range rt.tls.files {
			dirs[filepath.Dir(f)] = true
		}
	}
	for _, g := range rt.globs {
		// A pattern whose directory part is a pattern too ("*/x.yaml") is
		// watched through the directories of the files it matched.
		if d := filepath.Dir(g); !strings.ContainsAny(d, `*?[\`) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		if err := w.Add(d); err != nil {
			s.log.Warn("cannot watch a configuration directory; reload with SIGHUP", "dir", d, "error", err.Error())
		}
	}
}

// relevant reports whether a changed path is the configuration, one of its
// domain files or TLS files, a path one of envoy.files' patterns matches (a domain file
// added, removed or renamed), or the "..data" link Kubernetes swaps to
// update a mounted ConfigMap.
func (s *service) relevant(name string) bool {
	name = filepath.Clean(name)
	if strings.HasPrefix(filepath.Base(name), "..") {
		return true
	}
	if name == filepath.Clean(s.configPath) {
		return true
	}
	rt := s.cfg.Load()
	files := rt.files
	if rt.tls != nil {
		files = append(files[:len(files):len(files)], rt.tls.files...)
	}
	for _, f := range files {
		if name == filepath.Clean(f) {
			return true
		}
	}
	for _, g := range rt.globs {
		if ok, _ := filepath.Match(g, name); ok {
			return true
		}
	}
	return false
}
