package snowclaw_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction: its keyword and the rest of
// its line, continuations joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, lines ending in a backslash joined. It is written
// here because neither buildkit's parser nor hadolint is available where
// the tests run (the module proxy does not serve buildkit, Debian does not
// package hadolint); the format is line-based and this much of it is all
// the checks below need.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		more := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
		if more {
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{start, strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s: the last instruction ends in a backslash", path)
	}
	return out
}

// TestDeploy_Dockerfile lints the Dockerfile where no docker engine runs
// (.ci/run builds the image itself when one does): two stages, a static
// build stamped with its version, and a final stage that runs as a
// non-root user, keeps its data on a volume and checks its own health.
func TestDeploy_Dockerfile(t *testing.T) {
	ins := parseDockerfile(t, "Dockerfile")
	known := []string{"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
	var stages [][]instruction
	for _, in := range ins {
		if !slices.Contains(known, in.cmd) {
			t.Errorf("line %d: unknown instruction %q", in.line, in.cmd)
		}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("line %d: %s before the first FROM", in.line, in.cmd)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build (builder, then a small final image)", len(stages))
	}
	builder, final := stages[0], stages[len(stages)-1]
	name := regexp.MustCompile(`(?i)\sAS\s+(\S+)$`).FindStringSubmatch(builder[0].args)
	if name == nil {
		t.Fatalf("the builder stage %q has no name", builder[0].args)
	}
	find := func(stage []instruction, cmd string) []instruction {
		var out []instruction
		for _, in := range stage {
			if in.cmd == cmd {
				out = append(out, in)
			}
		}
		return out
	}
	build := ""
	for _, in := range find(builder, "RUN") {
		if strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w", "-X main.version=", "./cmd/snowclaw"} {
		if !strings.Contains(build, want) {
			t.Errorf("the go build %q lacks %s", build, want)
		}
	}
	copied := false
	for _, in := range find(final, "COPY") {
		copied = copied || strings.Contains(in.args, "--from="+name[1])
	}
	if !copied {
		t.Errorf("the final stage copies nothing from %q", name[1])
	}
	users := find(final, "USER")
	if len(users) == 0 {
		t.Error("the final stage runs as root: no USER")
	} else if u, _, _ := strings.Cut(users[len(users)-1].args, ":"); u == "root" || u == "0" {
		t.Errorf("USER %s is root", users[len(users)-1].args)
	}
	hc := find(final, "HEALTHCHECK")
	if len(hc) != 1 || !strings.Contains(hc[0].args, "snowclaw") || !strings.Contains(hc[0].args, "health") {
		t.Errorf("HEALTHCHECK %v: want one, running `snowclaw health` (the image has no curl)", hc)
	}
	vols := find(final, "VOLUME")
	if len(vols) == 0 || !strings.Contains(vols[0].args, "/data") {
		t.Errorf("VOLUME %v: want /data", vols)
	}
	env := ""
	for _, in := range find(final, "ENV") {
		env += " " + in.args
	}
	port := regexp.MustCompile(`SNOWCLAW_ADDR=0\.0\.0\.0:(\d+)`).FindStringSubmatch(env)
	if port == nil || !strings.Contains(env, "SNOWCLAW_DATA=/data") {
		t.Fatalf("ENV %q: want SNOWCLAW_ADDR=0.0.0.0:<port> (a container must listen beyond loopback) and SNOWCLAW_DATA=/data", env)
	}
	exposed := find(final, "EXPOSE")
	if len(exposed) == 0 || !strings.Contains(exposed[0].args, port[1]) {
		t.Errorf("EXPOSE %v: want the port of SNOWCLAW_ADDR, %s", exposed, port[1])
	}

	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "snowclaw-data", "node_modules"} {
		if !strings.Contains(string(ignore), want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}

// TestDeploy_SystemdUnit runs systemd-analyze verify on the unit, where
// systemd-analyze exists. verify warns without failing, so any output at
// all fails the test. ExecStart is pointed at an executable that exists
// here: verify refuses a missing one.
func TestDeploy_SystemdUnit(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join("deploy", "snowclaw.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=", "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes",
		"ProtectHome=yes", "RestrictAddressFamilies=", "MemoryDenyWriteExecute=yes", "SystemCallFilter=@system-service", "CapabilityBoundingSet=\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", strings.TrimSpace(want))
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snowclaw.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/snowclaw", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
