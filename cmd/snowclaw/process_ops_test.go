package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay"
)

// stopChild ends c with SIGTERM and waits for it, so its log is complete.
func stopChild(t *testing.T, c *child) string {
	t.Helper()
	c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logOf(c))
	}
	return logOf(c)
}

// TestProcess_EnvWarnsAndServes: the real binary started with a
// variable of ours it does not know, the variables Kubernetes sets for a
// Service named snowclaw, and empty settings of every kind serves, and
// its log names the unknown variable once and nothing of Kubernetes'.
func TestProcess_EnvWarnsAndServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	env := append([]string{
		"SNOWCLAW_NO_SUCH_SETTING=1",
		"SNOWCLAW_STORE_BACKEND=", "SNOWCLAW_LIMITS_MAX_LIMIT=", "SNOWCLAW_SEARCH_BM25_WEIGHT=",
		"SNOWCLAW_SEARCH_ENABLED=", "SNOWCLAW_GROUPS_MAX_MODERATION_AGE=", "SNOWCLAW_RELAY_TRUSTED_PROXIES=",
		"SNOWCLAW_MEMORY_SOURCES=", "SNOWCLAW_OWNER=",
	}, kubernetesEnv...)
	c := startChildEnv(t, t.TempDir(), env)
	ws, err := wsclient.Dial(c.url)
	if err != nil {
		t.Fatal(err)
	}
	if _, closed, err := ws.Fetch(nostr.Filter{Kinds: []int{1}}, 5*time.Second); err != nil || closed != "" {
		t.Fatalf("the relay does not serve: %v %s", err, closed)
	}
	ws.Close()
	log := stopChild(t, c)
	if n := strings.Count(log, "SNOWCLAW_NO_SUCH_SETTING"); n != 1 {
		t.Errorf("the unknown variable is named %d times, want once:\n%s", n, log)
	}
	if !regexp.MustCompile(`level=WARN msg="environment variable is not a setting; ignored[^"]*" name=SNOWCLAW_NO_SUCH_SETTING`).MatchString(log) {
		t.Errorf("no warning naming SNOWCLAW_NO_SUCH_SETTING:\n%s", log)
	}
	for _, k8s := range []string{"SNOWCLAW_SERVICE", "SNOWCLAW_PORT"} {
		if strings.Contains(log, k8s) {
			t.Errorf("Kubernetes' %s* variables were mentioned:\n%s", k8s, log)
		}
	}
}

// TestProcess_MetricsBuildInfo: /metrics of the real binary, built as a
// release is, carries no instance label of its own on any sample
// (Prometheus adds the target's), and snowclaw_build_info names the build
// as `snowclaw version`, `go version -m` and the toolchain do (and the
// checkout's commit, where git can tell it); the start-up log says the
// same version.
func TestProcess_MetricsBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := releaseBuild(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "snowclaw ")
	if version != releaseVersion {
		t.Fatalf("snowclaw version says %q, want %q", version, releaseVersion)
	}
	mod, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	revision := ""
	if m := regexp.MustCompile(`(?m)^\s+build\s+vcs\.revision=(\S+)$`).FindSubmatch(mod); m != nil {
		revision = string(m[1])
	}
	// go stamps the commit of a clone (.git a directory), not of a git
	// worktree (.git a file)
	if st, err := os.Stat(filepath.Join("..", "..", ".git")); err == nil && st.IsDir() {
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		if revision != strings.TrimSpace(string(head)) {
			t.Fatalf("the build stamped commit %q, the checkout is at %s", revision, head)
		}
	}
	const token = "scrape-token-0123456789"
	c := startChildBin(t, bin, t.TempDir(), []string{"SNOWCLAW_HTTP_METRICS_TOKEN=" + token, "SNOWCLAW_RELAY_INSTANCE_ID=relay-eu-1"})
	req, _ := http.NewRequest("GET", "http"+strings.TrimPrefix(c.url, "ws")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			samples++
			for _, l := range m.GetLabel() {
				if l.GetName() == "instance" || l.GetName() == "job" || l.GetValue() == "relay-eu-1" {
					t.Errorf("%s carries %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	if fams["go_goroutines"] == nil || fams["process_resident_memory_bytes"] == nil || samples < 50 {
		t.Fatalf("the standard series are missing (%d samples)", samples)
	}
	info := fams["snowclaw_build_info"]
	if info == nil || len(info.GetMetric()) != 1 {
		t.Fatalf("snowclaw_build_info: %v", info)
	}
	got := map[string]string{}
	for _, l := range info.GetMetric()[0].GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": version, "revision": revision, "goversion": runtime.Version()}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("snowclaw_build_info %s=%q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) || info.GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Errorf("snowclaw_build_info: labels %v, value %v", got, info.GetMetric()[0].GetGauge().GetValue())
	}
	if log := stopChild(t, c); !strings.Contains(log, "version="+version) {
		t.Errorf("the start-up log does not say version=%s:\n%s", version, log)
	}
}

// TestProcess_StandbyNamesLeader: two `snowclaw serve` over one
// PostgreSQL; the one that does not lead logs once, however often it
// tries the lock again, that it stands by and which instance leads.
func TestProcess_StandbyNamesLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := pgtest.New(t)
	keys := t.TempDir()
	if _, err := relay.LoadKeys(keys, true); err != nil {
		t.Fatal(err)
	}
	first := startChildEnv(t, sharedData(t, keys), []string{"SNOWCLAW_RELAY_INSTANCE_ID=relay-a"}, "--store-url", url)
	waitLog(t, first, `msg="leading: this instance runs the agent" component=leader instance=relay-a`, 20*time.Second)
	second := startChildEnv(t, sharedData(t, keys), []string{"SNOWCLAW_RELAY_INSTANCE_ID=relay-b"}, "--store-url", url, "--log-level", "debug")
	// the barrier: it has tried the lock again since it said so
	held := regexp.MustCompile(`msg="the lock is held: standing by"`)
	if !testwait.Until(20*time.Second, func() bool { return len(held.FindAllString(logOf(second), -1)) >= 3 }) {
		t.Fatalf("the second instance did not try the lock 3 times; stderr:\n%s", logOf(second))
	}
	told := regexp.MustCompile(`level=INFO msg="standing by: another instance runs the agent" component=leader leader=(\S+) leader_position=(\d+) leader_heartbeat_age=\S+`).FindAllStringSubmatch(logOf(second), -1)
	if len(told) != 1 || told[0][1] != "relay-a" {
		t.Fatalf("standing by, logged %d times (want once, naming relay-a): %v\n%s", len(told), told, logOf(second))
	}
	if strings.Contains(logOf(second), "leading:") {
		t.Fatal("both instances lead")
	}
}

// TestReindex_FinalProgressOnce: reindex's progress, on a log (not a
// terminal), ends with one line of the final count, not two.
func TestReindex_FinalProgressOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data := t.TempDir()
	c := startChild(t, data)
	ws, err := wsclient.Dial(c.url)
	if err != nil {
		t.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	for i := range 5 {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "a note about snow, number " + string(rune('a'+i))}
		evt.Sign(sk)
		publishOK(t, ws, evt)
	}
	ws.Close()
	stopChild(t, c)
	out, err := cli(t, nil, "reindex", "--data", data)
	if err != nil {
		t.Fatalf("reindex: %v\n%s", err, out)
	}
	var progress []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "reindex: ") {
			progress = append(progress, l)
		}
	}
	if len(progress) != 1 || !strings.HasPrefix(progress[0], "reindex: 5 docs") {
		t.Fatalf("progress lines %q, want one saying 5 docs\n%s", progress, out)
	}
}

// TestMigrate_DialErrorOnce: the real binary, pointed at a database
// that does not answer, says why once.
func TestMigrate_DialErrorOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	out, err := exec.Command(snowclawBin(t), "migrate", "--from", "postgres://nobody@127.0.0.1:1/x", "--to", "badger:"+t.TempDir()).CombinedOutput()
	if err == nil {
		t.Fatalf("migrate from nowhere succeeded:\n%s", out)
	}
	if n := strings.Count(string(out), "connection refused"); n != 1 {
		t.Fatalf("the refusal is said %d times, want once:\n%s", n, out)
	}
}
