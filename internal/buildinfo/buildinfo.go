// Package buildinfo says which build of snowclaw is running, from what
// the Go toolchain stamped into the binary: one reading for the version
// the CLI, NIP-11 and MCP report and for the revision /metrics reports.
package buildinfo

import "runtime/debug"

// Version is the version this binary reports: ldflags (the one a release
// build sets with -X main.version) when not empty, else the module
// version `go install module@version` records, else the VCS revision `go
// build` in a clone records (with "-dirty" for uncommitted changes),
// else "dev".
func Version(ldflags string) string {
	if ldflags != "" {
		return ldflags
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := revision(bi), ""
	if setting(bi, "vcs.modified") == "true" {
		dirty = "-dirty"
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "dev-" + rev + dirty
}

// Revision is the commit `go build` stamped into the binary; "" when
// none was stamped (go test, -buildvcs=false, a git worktree, go install
// module@version). A work tree with changes shows in Version, not here.
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return revision(bi)
}

func revision(bi *debug.BuildInfo) string { return setting(bi, "vcs.revision") }

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
