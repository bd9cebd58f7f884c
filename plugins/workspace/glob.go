package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// list walks the workspace for files matching the globs, as sorted slash
// paths relative to it. Directories no glob can reach are not entered;
// symlinked files are followed, symlinked directories are not.
func (f *Files) list() ([]string, error) {
	var out []string
	err := filepath.WalkDir(f.dir, func(full string, de fs.DirEntry, err error) error {
		if err != nil {
			if full == f.dir {
				return err
			}
			f.log.Warn("walking the workspace", "path", full, "err", err)
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if full == f.dir {
			return nil
		}
		r, err := filepath.Rel(f.dir, full)
		if err != nil {
			return nil
		}
		rel := filepath.ToSlash(r)
		segs := strings.Split(rel, "/")
		if de.IsDir() {
			for _, g := range f.globs {
				if g.couldContain(segs) {
					return nil
				}
			}
			return fs.SkipDir
		}
		if !f.matches(segs) {
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		} else if !de.Type().IsRegular() {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

func (f *Files) matches(segs []string) bool {
	for _, g := range f.globs {
		if g.match(segs) {
			return true
		}
	}
	return false
}

// glob is one indexed_paths pattern: slash-separated segments matched with
// path.Match, where a "**" segment spans any number of directories (none
// included). Names starting with "." are matched only by segments that
// start with "." too, so "**" does not wander into .git.
type glob struct {
	raw  string
	segs []string
}

func compileGlob(s string) (glob, error) {
	raw := s
	s = strings.TrimSpace(filepath.ToSlash(s))
	if s == "" {
		return glob{}, errors.New("empty pattern")
	}
	if path.IsAbs(s) || filepath.IsAbs(raw) {
		return glob{}, fmt.Errorf("%q: must be relative to the workspace directory", raw)
	}
	s = path.Clean(s)
	if s == ".." || strings.HasPrefix(s, "../") {
		return glob{}, fmt.Errorf("%q: must not leave the workspace directory", raw)
	}
	if s == "." {
		return glob{}, fmt.Errorf("%q: names no file", raw)
	}
	segs := strings.Split(s, "/")
	for _, seg := range segs {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return glob{}, fmt.Errorf("%q: ** must be a whole path segment, as in docs/**/*.md", raw)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return glob{}, fmt.Errorf("%q: %w", raw, err)
		}
	}
	if segs[len(segs)-1] == "**" {
		// "docs/**" means every file below docs
		segs = append(segs, "*")
	}
	return glob{raw: raw, segs: segs}, nil
}

func (g glob) match(name []string) bool { return matchSegs(g.segs, name) }

// couldContain: a file below directory dir may match.
func (g glob) couldContain(dir []string) bool { return prefixSegs(g.segs, dir) }

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if matchSegs(pat[1:], name) {
				return true
			}
			for len(name) > 0 && !hidden(name[0]) {
				name = name[1:]
				if matchSegs(pat[1:], name) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !matchSeg(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func prefixSegs(pat, dir []string) bool {
	if len(dir) == 0 {
		return true
	}
	if len(pat) <= 1 { // the last segment names files, not directories
		return false
	}
	if pat[0] == "**" {
		return prefixSegs(pat[1:], dir) || (!hidden(dir[0]) && prefixSegs(pat, dir[1:]))
	}
	return matchSeg(pat[0], dir[0]) && prefixSegs(pat[1:], dir[1:])
}

func matchSeg(pat, name string) bool {
	if hidden(name) && !strings.HasPrefix(pat, ".") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }
