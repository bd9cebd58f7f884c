//go:build !(linux || darwin)

package relay

import "errors"

// freeSpace is not measured on this system; the disk guard stays off.
func freeSpace(string) (uint64, error) {
	return 0, errors.New("free space is not measured on this operating system")
}
