// Package testdisk gives a test a small filesystem of its own, to fill
// up for real: a tmpfs of a given size, mounted on a temporary
// directory and unmounted when the test ends. Mounting needs root (or
// CAP_SYS_ADMIN); where it is refused, the test is skipped with a
// message saying so. Only tests import it.
package testdisk

import (
	"os"
	"path/filepath"
	"testing"
)

// Filler takes space on a volume, as another program filling the disk
// would, and gives it back.
type Filler struct {
	t    *testing.T
	path string
}

// Fill takes the volume of dir down to leaveMB MiB free (or as close as
// the filesystem's blocks allow), in a file of its own beside dir.
func Fill(t *testing.T, dir string, leaveMB int) *Filler {
	t.Helper()
	f := &Filler{t: t, path: filepath.Join(dir, "filler")}
	f.To(leaveMB)
	return f
}

// To grows or shrinks the filler until leaveMB MiB are free.
func (f *Filler) To(leaveMB int) {
	f.t.Helper()
	free := Free(f.t, filepath.Dir(f.path))
	size := int64(0)
	if st, err := os.Stat(f.path); err == nil {
		size = st.Size()
	}
	size += int64(free) - int64(leaveMB)<<20
	if size < 0 {
		size = 0
	}
	if err := allocate(f.path, size); err != nil {
		f.t.Fatalf("filling %s to %d bytes: %v", f.path, size, err)
	}
}

// Remove gives all the filler's space back.
func (f *Filler) Remove() {
	f.t.Helper()
	if err := os.Remove(f.path); err != nil {
		f.t.Fatal(err)
	}
}

// Free is the space left on dir's volume, in bytes.
func Free(t *testing.T, dir string) uint64 {
	t.Helper()
	free, err := free(dir)
	if err != nil {
		t.Fatal(err)
	}
	return free
}
