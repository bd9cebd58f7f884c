//go:build linux || darwin

package store

import (
	"os"
	"syscall"
)

// FreeSpace is the space on dir's volume that an unprivileged writer may
// still use (blocks available, not blocks free: root's reserve is not ours).
func FreeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// allocated is the disk space path's blocks take (a sparse file's
// written part), or its size where that is not known.
func allocated(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Blocks) * 512
	}
	return uint64(fi.Size())
}
