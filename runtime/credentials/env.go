package credentials

import "strings"

// lookupEnv is the value of the last NAME= entry of env.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// setEnv replaces every NAME= entry of env with one NAME=value, at the end.
func setEnv(env []string, name, value string) []string {
	return append(unsetEnv(env, name), name+"="+value)
}

// unsetEnv is env without its NAME= entries.
func unsetEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}
