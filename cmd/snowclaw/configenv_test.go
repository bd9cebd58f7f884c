package main

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestConfig_UnknownEnvWarns: a SNOWCLAW_* variable that names no
// setting does not stop start-up; it comes back once, named, and changes
// nothing.
func TestConfig_UnknownEnvWarns(t *testing.T) {
	env := []string{
		"SNOWCLAW_LIMITS_MAX_LIMT=5", "SNOWCLAW_LIMITS_MAX_LIMT=6", // twice: reported once
		"SNOWCLAW_FROBNICATE=1",
		"SNOWCLAW_LIMITS_MAX_TAGS=7", // a known one beside them still applies
	}
	cfg, ignored, err := resolveConfig(&serveFlags{}, env)
	if err != nil {
		t.Fatalf("an unknown variable stopped the config: %v", err)
	}
	want := []ignoredEnv{{Name: "SNOWCLAW_LIMITS_MAX_LIMT"}, {Name: "SNOWCLAW_FROBNICATE"}}
	if !slices.Equal(ignored, want) {
		t.Fatalf("ignored = %+v, want %+v", ignored, want)
	}
	def := DefaultConfig()
	def.Limits.MaxTags = 7
	if !reflect.DeepEqual(cfg, def) {
		t.Errorf("an ignored variable changed the config:\n got %+v\nwant %+v", cfg, def)
	}
	if s := ignored[0].String(); !strings.Contains(s, "SNOWCLAW_LIMITS_MAX_LIMT") || !strings.Contains(s, "ignored") {
		t.Errorf("warning %q", s)
	}
}

// kubernetesEnv is what Kubernetes injects into every pod of a namespace
// holding a Service named snowclaw with one port named ws.
var kubernetesEnv = []string{
	"SNOWCLAW_SERVICE_HOST=10.0.0.1",
	"SNOWCLAW_SERVICE_PORT=3334",
	"SNOWCLAW_SERVICE_PORT_WS=3334",
	"SNOWCLAW_PORT=tcp://10.0.0.1:3334",
	"SNOWCLAW_PORT_3334_TCP=tcp://10.0.0.1:3334",
	"SNOWCLAW_PORT_3334_TCP_PROTO=tcp",
	"SNOWCLAW_PORT_3334_TCP_PORT=3334",
	"SNOWCLAW_PORT_3334_TCP_ADDR=10.0.0.1",
}

// TestConfig_KubernetesServiceEnvSilent: the Service variables are
// neither settings nor worth a warning in every pod's log; and no setting
// could ever be mistaken for one.
func TestConfig_KubernetesServiceEnvSilent(t *testing.T) {
	cfg, ignored, err := resolveConfig(&serveFlags{}, kubernetesEnv)
	if err != nil || len(ignored) > 0 {
		t.Fatalf("Kubernetes' service variables: err %v, ignored %+v", err, ignored)
	}
	if !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Errorf("Kubernetes' service variables changed the config: %+v", cfg)
	}
	// the client commands' own variables are silent too
	if _, ignored, _ := resolveConfig(&serveFlags{}, []string{"SNOWCLAW_RELAY=ws://x", "SNOWCLAW_SEC=nsec1x", "SNOWCLAW_CONFIG="}); len(ignored) > 0 {
		t.Errorf("client variables reported: %+v", ignored)
	}
	fields := map[string]reflect.Value{}
	configFields(reflect.ValueOf(&cfg).Elem(), "", fields)
	for path := range fields {
		if kubernetesServiceEnv(envName(path)) {
			t.Errorf("setting %s has the environment name %s, which Kubernetes sets for a Service: it would be ignored", path, envName(path))
		}
	}
}

// TestConfig_EmptyEnvIsUnset: VAR= (or only blanks) leaves the value
// the file or the default gave, for every setting and every kind of
// setting: text, whole number, number, true/false, duration, list, map.
func TestConfig_EmptyEnvIsUnset(t *testing.T) {
	file := writeFile(t, `
owner = "`+ownerNpub+`"
[relay]
trusted_proxies = ["10.0.0.0/8"]
[limits]
max_limit = 777
[search]
enabled = false
bm25_weight = 0.5
[groups]
max_moderation_age = "3h"
[memory.sources]
"group:ops" = 0.5
[store]
backend = "postgres"
postgres_url = "postgres://snow@db/relay"
`)
	fromFile, _, err := resolveConfig(&serveFlags{config: file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// the file really set one setting of each kind
	def := DefaultConfig()
	for kind, changed := range map[string]bool{
		"string":   fromFile.Store.Backend != def.Store.Backend,
		"int":      fromFile.Limits.MaxLimit != def.Limits.MaxLimit,
		"float":    fromFile.Search.BM25Weight != def.Search.BM25Weight,
		"bool":     fromFile.Search.Enabled != def.Search.Enabled,
		"duration": fromFile.Groups.MaxModerationAge != def.Groups.MaxModerationAge,
		"list":     len(fromFile.Relay.TrustedProxies) == 1,
		"map":      len(fromFile.Memory.Sources) == 1,
	} {
		if !changed {
			t.Fatalf("the file set no %s setting", kind)
		}
	}
	fields := map[string]reflect.Value{}
	configFields(reflect.ValueOf(&def).Elem(), "", fields)
	kinds := map[reflect.Kind]bool{}
	var empty, blank []string
	for path, v := range fields {
		kinds[v.Kind()] = true
		empty = append(empty, envName(path)+"=")
		blank = append(blank, envName(path)+"=  ")
	}
	if len(kinds) < 6 { // string, int, float64, bool, struct (Duration), slice, map
		t.Fatalf("only %d kinds of settings: %v", len(kinds), kinds)
	}
	for name, env := range map[string][]string{"empty": empty, "blank": blank} {
		got, ignored, err := resolveConfig(&serveFlags{config: file}, env)
		if err != nil || len(ignored) > 0 {
			t.Fatalf("%s variables: err %v, ignored %+v", name, err, ignored)
		}
		if !reflect.DeepEqual(got, fromFile) {
			t.Errorf("%s variables changed the config:\n got %+v\nwant %+v", name, got, fromFile)
		}
		got, _, err = resolveConfig(&serveFlags{}, env)
		if err != nil {
			t.Fatalf("%s variables without a file: %v", name, err)
		}
		if !reflect.DeepEqual(got, DefaultConfig()) {
			t.Errorf("%s variables changed the defaults:\n got %+v\nwant %+v", name, got, DefaultConfig())
		}
	}
	// a value still overrides the file
	got, _, err := resolveConfig(&serveFlags{config: file}, []string{"SNOWCLAW_GROUPS_MAX_MODERATION_AGE=5m", "SNOWCLAW_OWNER="})
	if err != nil || got.Groups.MaxModerationAge.Duration != 5*time.Minute || got.Owner != ownerHex {
		t.Errorf("with a value: err %v, age %v, owner %q", err, got.Groups.MaxModerationAge, got.Owner)
	}
}

// TestConfig_DefaultDataDirIgnored: `go run ./cmd/snowclaw serve` in the
// checkout makes the default data directory there; git ignores it, keys
// and all.
func TestConfig_DefaultDataDirIgnored(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	for _, f := range []string{"relay.key", "events/000001.vlog"} {
		p := filepath.Join(DefaultConfig().Data, f)
		if out, err := exec.Command("git", "-C", root, "check-ignore", "--no-index", p).CombinedOutput(); err != nil {
			t.Errorf("%s is not ignored by .gitignore: %v %s", p, err, out)
		}
	}
}
