// Package redact removes passwords from URLs before they are printed, for
// the service's and the examples' logs and errors.
package redact

import (
	"errors"
	"net/url"
	"strings"
)

// URL returns s with the password of its user information, if any, replaced
// by "xxxxx". It works on text url.Parse refuses too (a malformed host, a
// bad escape), since such a URL is exactly the one an error message quotes.
func URL(s string) string {
	scheme := strings.Index(s, "://")
	if scheme < 0 {
		return s
	}
	rest := s[scheme+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return s
	}
	return s[:scheme+3] + user + ":xxxxx" + rest[at:]
}

// Error returns err with the URL of a *url.Error inside it redacted (the
// error url.Parse and redis.ParseURL return quotes the whole URL).
func Error(err error) error {
	var ue *url.Error
	if err == nil || !errors.As(err, &ue) {
		return err
	}
	return &url.Error{Op: ue.Op, URL: URL(ue.URL), Err: ue.Err}
}
