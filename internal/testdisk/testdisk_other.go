//go:build !linux

package testdisk

import (
	"errors"
	"testing"
)

// Small skips the test: a small filesystem is made only on Linux.
func Small(t *testing.T, sizeMB int) string {
	t.Helper()
	t.Skipf("needs a small filesystem to fill (a %d MiB tmpfs), which this test makes only on Linux", sizeMB)
	return ""
}

func free(string) (uint64, error) { return 0, errors.New("not on this system") }

func allocate(string, int64) error { return errors.New("not on this system") }
