package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// builder assembles a program with named, forward-only jump targets.
type builder struct {
	insns  []bpf.Instruction
	jumps  []jump         // conditional jumps to resolve
	labels map[string]int // label -> instruction index
}

type jump struct {
	pc              int
	ifTrue, ifFalse string // "" means the next instruction
}

func newBuilder() *builder { return &builder{labels: map[string]int{}} }

func (b *builder) add(i bpf.Instruction) { b.insns = append(b.insns, i) }

// jumpIf adds a conditional jump; "" as a target means fall through.
func (b *builder) jumpIf(cond bpf.JumpTest, val uint32, ifTrue, ifFalse string) {
	b.jumps = append(b.jumps, jump{len(b.insns), ifTrue, ifFalse})
	b.add(bpf.JumpIf{Cond: cond, Val: val})
}

// label names the next instruction.
func (b *builder) label(name string) {
	if _, dup := b.labels[name]; dup {
		panic(fmt.Sprintf("seccomp: label %q placed twice", name))
	}
	b.labels[name] = len(b.insns)
}

// program resolves the labels. A backward or out-of-range jump, or a label
// that was never placed, is a bug in the program's construction.
func (b *builder) program() ([]bpf.Instruction, error) {
	out := append([]bpf.Instruction(nil), b.insns...)
	for _, j := range b.jumps {
		skip := func(target string) (uint8, error) {
			if target == "" {
				return 0, nil
			}
			to, ok := b.labels[target]
			if !ok {
				return 0, fmt.Errorf("at l%d: label %q is never placed", j.pc, target)
			}
			d := to - j.pc - 1
			if d < 0 || d > 255 {
				return 0, fmt.Errorf("at l%d: jump to %q (l%d) is backward or too far", j.pc, target, to)
			}
			return uint8(d), nil
		}
		in := out[j.pc].(bpf.JumpIf)
		var err error
		if in.SkipTrue, err = skip(j.ifTrue); err != nil {
			return out, err
		}
		if in.SkipFalse, err = skip(j.ifFalse); err != nil {
			return out, err
		}
		out[j.pc] = in
	}
	if _, ok := out[len(out)-1].(bpf.RetConstant); !ok {
		return out, fmt.Errorf("the program does not end in a return")
	}
	return out, nil
}
