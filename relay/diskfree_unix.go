//go:build linux || darwin

package relay

import "syscall"

// freeSpace is the space on dir's volume that an unprivileged writer may
// still use (blocks available, not blocks free: root's reserve is not ours).
func freeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
