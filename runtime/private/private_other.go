//go:build !unix

package private

import "errors"

// Dir cannot check ownership on this system, so it trusts no directory.
func Dir(string) error {
	return errors.New("private directories are checked on Unix systems only")
}

// Check cannot check ownership on this system, so it trusts no directory.
func Check(string) error {
	return errors.New("private directories are checked on Unix systems only")
}

// WriteFile cannot check ownership on this system, so it writes nothing.
func WriteFile(string, string, []byte) error {
	return errors.New("private directories are checked on Unix systems only")
}
