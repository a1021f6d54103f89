package policy

import (
	"strings"
	"testing"
)

func TestNormalizeWindows(t *testing.T) {
	tests := []struct {
		name, in string
		literal  bool
		want     WindowsPath
		err      string // substring of the error; "" for none
	}{
		// docs/reference.md#windows-cases, W14.
		{name: "userprofile", in: `%USERPROFILE%\x`, want: WindowsPath{Path: MustParsePath("${HOME}/x")}},
		{name: "userprofile any case", in: `%UserProfile%\x\`, want: WindowsPath{Path: MustParsePath("${HOME}/x"), TrailingSeparator: true}},
		{name: "lower drive", in: `c:\y`, want: WindowsPath{Path: MustParsePath("C:/y")}},
		{name: "verbatim prefix", in: `\\?\C:\z`, want: WindowsPath{Path: MustParsePath("C:/z")}},
		{name: "unc", in: `\\srv\share\f`, want: WindowsPath{Path: MustParsePath("//srv/share/f")}},
		{name: "verbatim unc", in: `\\?\UNC\srv\share\f`, want: WindowsPath{Path: MustParsePath("//srv/share/f")}},
		{name: "tilde backslash", in: `~\.npmrc`, want: WindowsPath{Path: MustParsePath("${HOME}/.npmrc")}},
		{name: "tilde slash", in: `~/.ssh`, want: WindowsPath{Path: MustParsePath("${HOME}/.ssh")}},
		{name: "tilde alone", in: `~`, want: WindowsPath{Path: MustParsePath("${HOME}")}},
		{name: "homedrive homepath", in: `%HOMEDRIVE%%HOMEPATH%\.aws`, want: WindowsPath{Path: MustParsePath("${HOMEDRIVE}${HOMEPATH}/.aws")}},
		{name: "homedrive root", in: `%HOMEDRIVE%\`, want: WindowsPath{Path: MustParsePath("${HOMEDRIVE}/")}},
		{name: "relative", in: `src\gen`, want: WindowsPath{Path: MustParsePath("${CWD}/src/gen")}},
		{name: "dot", in: `.`, want: WindowsPath{Path: MustParsePath("${CWD}")}},
		{name: "mixed and doubled separators", in: `C:/a\\b/./c//`, want: WindowsPath{Path: MustParsePath("C:/a/b/c"), TrailingSeparator: true}},
		{name: "drive root", in: `C:\`, want: WindowsPath{Path: MustParsePath("C:/")}},
		{name: "dotdot kept", in: `C:\a\..\b`, want: WindowsPath{Path: MustParsePath("C:/a/../b")}},
		// Only * and ? make a pattern; brackets are name characters.
		{name: "brackets literal", in: `C:\app\[prod].env`, want: WindowsPath{Path: MustParsePath("C:/app/[prod].env")}},
		{name: "glob", in: `C:\p\**\*.pem`, want: WindowsPath{Path: MustParsePath("C:/p/**/*.pem"), Pattern: true}},
		{name: "trailing globstar", in: `C:\p\**`, want: WindowsPath{Path: MustParsePath("C:/p")}},
		{name: "trailing globstar literal", in: `C:\p\**`, literal: true, want: WindowsPath{Path: MustParsePath("C:/p/**"), Skip: true}},
		{name: "question literal", in: `C:\a?b`, literal: true, want: WindowsPath{Path: MustParsePath("C:/a?b"), Skip: true}},
		{name: "case kept", in: `C:\P\Dir`, want: WindowsPath{Path: MustParsePath("C:/P/Dir")}},
		// Spellings that need the host's current drive are refused.
		{name: "rooted without drive", in: `\tools`, err: "no drive letter"},
		{name: "posix absolute", in: `/etc/x`, err: "no drive letter"},
		{name: "drive relative", in: `C:x`, err: "relative to the current directory of drive C"},
		{name: "bare drive", in: `d:`, err: "drive D"},
		{name: "homepath alone", in: `%HOMEPATH%\x`, err: "%HOMEPATH% has no drive"},
		{name: "a root twice", in: `%USERPROFILE%%USERPROFILE%\secret`, err: "name no directory together"},
		{name: "drive then profile", in: `%HOMEDRIVE%%USERPROFILE%\y`, err: "name no directory together"},
		{name: "homedrive alone", in: `%HOMEDRIVE%`, err: "is a drive"},
		{name: "var in the middle", in: `C:\x\%USERPROFILE%`, err: "may only start a path"},
		{name: "var glued", in: `%USERPROFILE%x`, err: "must be followed by"},
		{name: "unc without share", in: `\\srv`, err: "not a UNC path"},
		{name: "unc wildcard server", in: `\\s*\share\x`, err: "cannot contain * or ?"},
		{name: "unc pattern below share", in: `\\srv\share\*.txt`, want: WindowsPath{Path: MustParsePath("//srv/share/*.txt"), Pattern: true}},
		{name: "verbatim without drive", in: `\\?\~\x`, err: "continues with a drive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeWindows(tt.in, tt.literal)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NormalizeWindows(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("NormalizeWindows(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestNormalizeWindowsRoundTrip: over generated spellings, NormalizeWindows
// never panics, leaves no backslash, no empty or "." segment and no
// lower-case drive letter, ParsePath reads its spelling back, and reading
// its result written back in Windows spelling gives the same path
// (normalising is idempotent).
func TestNormalizeWindowsRoundTrip(t *testing.T) {
	parts := []string{`C:`, `c:`, `\`, `/`, `\\`, `\\?\`, `\\?\UNC\`, `%USERPROFILE%`, `%homedrive%`, `%HOMEPATH%`, `~`, `.`, `..`, `a`, `B c`, `*`, `?`, `**`, `[x]`, `é`}
	render := strings.NewReplacer("${HOME}", "%USERPROFILE%", "${HOMEDRIVE}", "%HOMEDRIVE%", "${HOMEPATH}", "%HOMEPATH%", "/", `\`)
	seed := uint32(1)
	next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	checked := 0
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := next(6) + 1; j > 0; j-- {
			b.WriteString(parts[next(len(parts))])
		}
		in, literal := b.String(), next(2) == 0
		got, err := NormalizeWindows(in, literal)
		if err != nil {
			continue
		}
		checked++
		if back, err := ParsePath(got.Path.String()); err != nil || back != got.Path {
			t.Fatalf("NormalizeWindows(%q) = %q, which ParsePath reads as %#v, %v", in, got.Path, back, err)
		}
		p := got.Path.String()
		if strings.Contains(p, `\`) || strings.Contains(p, "//"[:1]+"/") && !strings.HasPrefix(p, "//") || strings.Contains(p, "/./") || strings.HasSuffix(p, "/.") {
			t.Fatalf("NormalizeWindows(%q) = %q: not clean", in, p)
		}
		if len(p) >= 2 && p[1] == ':' && p[0] >= 'a' && p[0] <= 'z' {
			t.Fatalf("NormalizeWindows(%q) = %q: lower-case drive", in, p)
		}
		again := render.Replace(p)
		if rest, ok := strings.CutPrefix(p, "${CWD}"); ok {
			again = "." + render.Replace(rest) // .\~ stays a name
		}
		got2, err := NormalizeWindows(again, literal)
		if err != nil || got2.Path != got.Path {
			t.Fatalf("NormalizeWindows(%q) = %q, written back %q reads %q, %v", in, p, again, got2.Path, err)
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d of 20000 generated spellings were accepted; the generator is off", checked)
	}
}
