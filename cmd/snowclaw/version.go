package main

import (
	"runtime/debug"
)

// version is set at release builds with -ldflags "-X main.version=v1.2.3"
// (Makefile, .goreleaser.yaml, Dockerfile). Left empty, versionString
// asks the build info instead.
var version = ""

// versionString is the version this binary reports (--version, NIP-11,
// MCP): the -ldflags one, else the module version `go install
// module@version` records, else the VCS revision `go build` in a
// checkout records (with "-dirty" for uncommitted changes), else "dev".
func versionString() string {
	if version != "" {
		return version
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
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "dev-" + rev + dirty
}
