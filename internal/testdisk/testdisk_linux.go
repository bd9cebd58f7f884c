package testdisk

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Small mounts a tmpfs of sizeMB MiB on a new temporary directory and
// returns it; it is unmounted when the test ends (lazily, so that a
// process still holding a file there does not keep it). The test is
// skipped where mounting is not allowed.
func Small(t *testing.T, sizeMB int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("size=%dm,mode=0700", sizeMB)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		t.Skipf("needs a small filesystem to fill: mounting a %d MiB tmpfs was refused (%v); run the tests as root, or with CAP_SYS_ADMIN, to run it", sizeMB, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the test's tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

func free(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// allocate sets path's size to size bytes, with every block taken.
func allocate(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	return syscall.Fallocate(int(f.Fd()), 0, 0, size)
}
