//go:build !(linux || darwin)

package store

import (
	"errors"
	"os"
)

// FreeSpace is not measured on this system; the disk guard stays off.
func FreeSpace(string) (uint64, error) {
	return 0, errors.New("free space is not measured on this operating system")
}

// allocated is fi's size: its blocks are not counted on this system.
func allocated(fi os.FileInfo) uint64 { return uint64(fi.Size()) }
