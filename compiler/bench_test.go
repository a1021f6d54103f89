package compiler

import (
	"encoding/json"
	"fmt"
	"testing"

	"srt.dev/schema"
)

// largeSettings is a settings file with 1,000 domains and 500 paths.
func largeSettings(b *testing.B) []byte {
	var allowed, denied []string
	for i := range 1000 {
		if i%10 == 0 {
			denied = append(denied, fmt.Sprintf("*.blocked%d.example.com", i))
		} else {
			allowed = append(allowed, fmt.Sprintf("host%d.example.com:443", i))
		}
	}
	var read, write, deny []string
	for i := range 500 {
		switch i % 3 {
		case 0:
			read = append(read, fmt.Sprintf("~/secrets/%d", i))
		case 1:
			write = append(write, fmt.Sprintf("./build/out%d/**", i))
		default:
			deny = append(deny, fmt.Sprintf("./build/out%d/keep", i-1))
		}
	}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": allowed, "deniedDomains": denied},
		"filesystem": map[string]any{"denyRead": read, "allowWrite": write, "denyWrite": deny},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkCompile loads and compiles a large settings file (goal: 50 ms).
func BenchmarkCompile(b *testing.B) {
	data := largeSettings(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		p, diags, err := CompileFile("large.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil || len(p.Network.Allowed) != 900 {
			b.Fatal(err, diags)
		}
	}
}

// BenchmarkCompileOnly compiles the same file already loaded.
func BenchmarkCompileOnly(b *testing.B) {
	s, diags := schema.Options{OS: schema.OSPosix}.Load("large.json", largeSettings(b))
	if diags != nil {
		b.Fatal(diags)
	}
	for b.Loop() {
		if _, _, err := Compile(s, schema.Options{OS: schema.OSPosix}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileScaling loads and compiles settings files of growing
// size; the time and memory per operation must grow linearly with the
// entry count.
func BenchmarkCompileScaling(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var allowed, denied, read, write, deny []string
			for i := range n / 5 {
				allowed = append(allowed, fmt.Sprintf("host%d.example%d.com:443", i, i%97))
				denied = append(denied, fmt.Sprintf("*.blocked%d.example.org", i))
				read = append(read, fmt.Sprintf("~/secrets/%d", i))
				write = append(write, fmt.Sprintf("./build/out%d/**", i))
				deny = append(deny, fmt.Sprintf("./build/out%d/keep", i))
			}
			data, err := json.MarshalIndent(map[string]any{
				"network":    map[string]any{"allowedDomains": allowed, "deniedDomains": denied},
				"filesystem": map[string]any{"denyRead": read, "allowWrite": write, "denyWrite": deny},
			}, "", "  ")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, diags, err := CompileFile("large.json", data, schema.Options{OS: schema.OSPosix}); err != nil || diags != nil {
					b.Fatal(err, diags)
				}
			}
		})
	}
}
