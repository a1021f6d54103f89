//go:build unix

package main

import "testing"

func TestCleanPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/admin", "/admin"},
		{"", "/"},
		{"/", "/"},
		// Dot segments (RFC 3986 §5.2.4, with its examples).
		{"/./admin", "/admin"},
		{"/x/../admin", "/admin"},
		{"/x/./../admin", "/admin"},
		{"/../admin", "/admin"},
		{"/../../admin", "/admin"},
		{"/a/b/c/./../../g", "/a/g"},
		{"mid/content=5/../6", "mid/6"},
		{"/a/b/.", "/a/b/"},
		{"/a/b/..", "/a/"},
		{"/a/..b/c", "/a/..b/c"},
		{"/a/b./c", "/a/b./c"},
		// Escapes of unreserved characters are decoded, the others
		// written in upper case and kept (RFC 3986 §6.2.2.1, §6.2.2.2).
		{"/%61dmin", "/admin"},
		{"/%41dmin", "/Admin"},
		{"/%2e%2e/admin", "/admin"},
		{"/x/%2E%2E/admin", "/admin"},
		{"/x/.%2e/admin", "/admin"},
		{"/%7euser", "/~user"},
		{"/a%2fb", "/a%2Fb"},
		{"/a%5cb", "/a%5Cb"},
		{"/%252e", "/%252e"},
		{"/%zz/%4", "/%zz/%4"},
		{"/%", "/%"},
		// Runs of slashes become one, after dot segments are removed.
		{"//admin", "/admin"},
		{"/a//b///c", "/a/b/c"},
		{"/a//../admin", "/a/admin"},
		// Query and fragment are not part of the path.
		{"/admin?x=1", "/admin"},
		{"/admin#top", "/admin"},
		{"/?/admin", "/"},
		// Case is kept: paths are case-sensitive.
		{"/ADMIN", "/ADMIN"},
		// Backslashes and ;parameters are characters of the path.
		{`/x\..\admin`, `/x\..\admin`},
		{"/x/..;/admin", "/x/..;/admin"},
	}
	for _, tt := range tests {
		if got := cleanPath(tt.in); got != tt.want {
			t.Errorf("cleanPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLenientPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/admin", "/admin"},
		{"/x/..%2Fadmin", "/admin"},
		{"/x%2F..%2Fadmin", "/admin"},
		{"/x%2f%2e%2e%2fadmin", "/admin"},
		{"/%2561dmin", "/admin"},
		{"/x/%252e%252e/admin", "/admin"},
		{"/x/%25252e%25252e/admin", "/admin"},
		{`/x\..\admin`, "/admin"},
		{"/x%5C..%5Cadmin", "/admin"},
		{"/x/..;/admin", "/admin"},
		{"/x/..;jsessionid=1/admin", "/admin"},
		{"/admin;jsessionid=1", "/admin"},
		{"/adm;x/in", "/adm/in"},
		{"/a//../admin", "/admin"},
		{"/x%2F%2F..%2Fadmin", "/admin"},
		{"/admin?x=1", "/admin"},
		{"/ADMIN", "/ADMIN"},
		{"/%00admin", "/\x00admin"},
	}
	for _, tt := range tests {
		if got := lenientPath(tt.in); got != tt.want {
			t.Errorf("lenientPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDeniedPath(t *testing.T) {
	prefixes := []string{"/admin", "/private/"}
	tests := []struct {
		path   string
		denied string // the prefix, "" when allowed
	}{
		{"/hello", ""},
		{"/admin", "/admin"},
		{"/admin/x", "/admin"},
		{"/administrator", "/admin"},
		{"/./admin", "/admin"},
		{"/x/../admin", "/admin"},
		{"/%61dmin", "/admin"},
		{"/%2e/admin", "/admin"},
		{"//admin", "/admin"},
		{"/.//admin", "/admin"},
		{"/x/..%2Fadmin", "/admin"},
		{"/x%2F..%2Fadmin", "/admin"},
		{"/%2561dmin", "/admin"},
		{`/x\..\admin`, "/admin"},
		{"/x/..;/admin", "/admin"},
		{"/a//../admin", "/admin"},
		{"/admin?x=1", "/admin"},
		{"/private/key", "/private/"},
		{"/private", ""},
		{"/public/../private/key", "/private/"},
		{"/x/admin", ""},
		{"/adm", ""},
		{"/ADMIN", ""},
		{"/%41dmin", ""},
		{"/hello?next=/admin", ""},
		{"/x/..%2Fhello", ""},
		{"/admin%2Fx", "/admin"},
	}
	for _, tt := range tests {
		got, denied := deniedPath(tt.path, prefixes)
		if denied != (tt.denied != "") || got != tt.denied {
			t.Errorf("deniedPath(%q) = %q, %v; want %q", tt.path, got, denied, tt.denied)
		}
	}
	// A prefix is read as a path is.
	if p, denied := deniedPath("/admin/x", []string{"/x/../admin"}); !denied || p != "/x/../admin" {
		t.Errorf("deniedPath with a prefix spelled with dot segments = %q, %v", p, denied)
	}
}
