package main

import (
	"context"
	"fmt"
	"io"

	"github.com/snowclaw/snowclaw/internal/buildinfo"
)

// version is set at release builds with -ldflags "-X main.version=v1.2.3"
// (Makefile, .goreleaser.yaml, Dockerfile). Left empty, versionString
// asks the build info instead.
var version = ""

// versionString is the version this binary reports (--version, NIP-11,
// MCP, snowclaw_build_info): internal/buildinfo's reading of it.
func versionString() string { return buildinfo.Version(version) }

func runVersion(_ context.Context, _, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintln(stdout, "snowclaw", versionString())
	return err
}
