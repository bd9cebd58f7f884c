package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// examplePath is config.example.toml at the repository root.
var examplePath = filepath.Join("..", "..", "config.example.toml")

// commentedOut are the keys config.example.toml shows only as a comment,
// on purpose: their default is "unset" and the example value is a
// placeholder.
var commentedOut = map[string]bool{"owner": true, "groups.max_moderation_age": true}

// Fixed test identities.
var (
	ownerSK   = "0000000000000000000000000000000000000000000000000000000000000001"
	otherSK   = "0000000000000000000000000000000000000000000000000000000000000002"
	ownerHex  = mustPub(ownerSK)
	otherHex  = mustPub(otherSK)
	ownerNpub = mustNpub(ownerHex)
	otherNpub = mustNpub(otherHex)
)

func mustPub(sk string) string {
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		panic(err)
	}
	return pk
}

func mustNpub(pk string) string {
	npub, err := nip19.EncodePublicKey(pk)
	if err != nil {
		panic(err)
	}
	return npub
}

func allPaths() []string {
	fields := make(map[string]reflect.Value)
	cfg := DefaultConfig()
	configFields(reflect.ValueOf(&cfg).Elem(), "", fields)
	paths := make([]string, 0, len(fields))
	for p := range fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// exampleLines scans config.example.toml and returns, by TOML path, the
// keys assigned on an uncommented line, the keys shown in a commented-out
// assignment ("# owner = …"), and the comment block above every key.
func exampleLines(t *testing.T) (set, commented map[string]bool, docs map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	set, commented, docs = map[string]bool{}, map[string]bool{}, map[string]string{}
	table := ""
	var block []string
	assign := regexp.MustCompile(`^([a-z0-9_]+)\s*=`)
	commentedAssign := regexp.MustCompile(`^#\s*([a-z0-9_]+)\s*=`)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		path := func(k string) string {
			if table == "" {
				return k
			}
			return table + "." + k
		}
		switch {
		case line == "":
			block = nil
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			table = strings.Trim(line, "[] ")
			// a table that is itself a key (a map of weights) is set by
			// its header and documented by the comment above it
			set[table] = true
			docs[table] = strings.Join(block, "\n")
			block = nil
		case commentedAssign.MatchString(line):
			k := path(commentedAssign.FindStringSubmatch(line)[1])
			commented[k] = true
			docs[k] = strings.Join(block, "\n")
			block = nil
		case strings.HasPrefix(line, "#"):
			block = append(block, line)
		case assign.MatchString(line):
			k := path(assign.FindStringSubmatch(line)[1])
			set[k] = true
			docs[k] = strings.Join(block, "\n")
			block = nil
		}
	}
	return set, commented, docs
}

func TestConfig_ExampleCoversEveryKey(t *testing.T) {
	var cfg Config
	md, err := toml.DecodeFile(examplePath, &cfg)
	if err != nil {
		t.Fatalf("config.example.toml does not parse: %v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Errorf("config.example.toml has keys Config does not know: %v", und)
	}
	_, commented, _ := exampleLines(t)
	for _, path := range allPaths() {
		t.Run(path, func(t *testing.T) {
			defined := md.IsDefined(strings.Split(path, ".")...)
			switch {
			case commentedOut[path]:
				if defined {
					t.Errorf("%s should be commented out in config.example.toml (its default is unset)", path)
				}
				if !commented[path] {
					t.Errorf("%s is missing from config.example.toml, not even as a comment", path)
				}
			case !defined:
				t.Errorf("config.example.toml does not set %s", path)
			}
		})
	}
	for k := range commented {
		if !commentedOut[k] {
			t.Errorf("config.example.toml comments out %s; set it to its default or add it to commentedOut", k)
		}
	}
}

func TestConfig_ExampleDocumentsEveryKey(t *testing.T) {
	_, _, docs := exampleLines(t)
	for _, path := range allPaths() {
		doc, ok := docs[path]
		if !ok {
			t.Errorf("%s: not in config.example.toml", path)
			continue
		}
		if !strings.Contains(doc, "Default:") {
			t.Errorf("%s: the comment above it does not give its default:\n%s", path, doc)
		}
	}
	raw, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{envName("limits.max_limit"), "comma-separated"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("config.example.toml does not explain the environment rule (missing %q)", want)
		}
	}
}

func TestConfig_ExampleIsDefaults(t *testing.T) {
	var got Config // zero, so every value must come from the file
	if err := loadFile(&got, examplePath); err != nil {
		t.Fatal(err)
	}
	if len(got.Groups.Creators) == 0 {
		got.Groups.Creators = nil // creators = [] and no creators are the same
	}
	if len(got.Memory.IndexedPaths) == 0 {
		got.Memory.IndexedPaths = nil
	}
	if len(got.Groups.Encrypted) == 0 {
		got.Groups.Encrypted = nil
	}
	if want := DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("config.example.toml differs from DefaultConfig():\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("config.example.toml does not validate: %v", err)
	}
}

// TestConfig_EnvCoversEveryKey sets every key through its SNOWCLAW_* name
// and checks the result is the same config.
func TestConfig_EnvCoversEveryKey(t *testing.T) {
	want := DefaultConfig()
	want.Owner = ownerHex
	want.Groups.Creators = []string{ownerHex, otherHex}
	want.Relay.TrustedProxies = []string{"127.0.0.1", "10.0.0.0/8"}
	fields := make(map[string]reflect.Value)
	configFields(reflect.ValueOf(&want).Elem(), "", fields)
	var environ []string
	for path, v := range fields {
		var s string
		switch x := v.Interface().(type) {
		case []string:
			s = strings.Join(x, ", ")
		case Duration:
			s = x.String()
		case WeightMap:
			var parts []string
			for k, w := range x {
				parts = append(parts, fmt.Sprintf("%s=%g", k, w))
			}
			s = strings.Join(parts, ",")
		default:
			s = fmt.Sprint(x)
		}
		environ = append(environ, envName(path)+"="+s)
	}
	var got Config
	if ignored, err := loadEnv(&got, environ); err != nil || len(ignored) > 0 {
		t.Fatal(err, ignored)
	}
	// an empty list or map is written as an empty variable, which is the
	// variable unset: the field keeps its zero value, nil
	gotFields := make(map[string]reflect.Value)
	configFields(reflect.ValueOf(&got).Elem(), "", gotFields)
	for path, v := range fields {
		if k := v.Kind(); (k == reflect.Map || k == reflect.Slice) && v.Len() == 0 && gotFields[path].IsNil() {
			gotFields[path].Set(v)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config from environment:\n got %+v\nwant %+v", got, want)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "snowclaw.toml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfig_Precedence(t *testing.T) {
	file := fmt.Sprintf("addr = \"127.0.0.1:1111\"\ndata = \"/file\"\nowner = %q\n", ownerNpub)
	env := []string{"SNOWCLAW_ADDR=127.0.0.1:2222", "SNOWCLAW_DATA=/env", "SNOWCLAW_OWNER=" + otherHex}
	flags := serveFlags{addr: "127.0.0.1:3333", data: "/flag", owner: ownerNpub}
	tests := []struct {
		name      string
		file      bool
		env       []string
		flags     serveFlags
		wantAddr  string
		wantData  string
		wantOwner string
	}{
		{"Defaults", false, nil, serveFlags{}, "127.0.0.1:3334", "./snowclaw-data", ""},
		{"FileOverDefaults", true, nil, serveFlags{}, "127.0.0.1:1111", "/file", ownerHex},
		{"EnvOverFile", true, env, serveFlags{}, "127.0.0.1:2222", "/env", otherHex},
		{"EnvOverDefaults", false, env, serveFlags{}, "127.0.0.1:2222", "/env", otherHex},
		{"FlagsOverEnv", true, env, flags, "127.0.0.1:3333", "/flag", ownerHex},
		{"FlagsOverFile", true, nil, serveFlags{addr: "127.0.0.1:3333", owner: otherNpub}, "127.0.0.1:3333", "/file", otherHex},
		{"OneFlagOnly", true, env, serveFlags{data: "/flag"}, "127.0.0.1:2222", "/flag", otherHex},
	}
	for _, tt := range tests {
		// the file named by --config and by SNOWCLAW_CONFIG
		for _, via := range []string{"Flag", "Env"} {
			t.Run(tt.name+"/ConfigBy"+via, func(t *testing.T) {
				fl := tt.flags
				environ := append([]string(nil), tt.env...)
				if tt.file {
					p := writeFile(t, file)
					if via == "Flag" {
						fl.config = p
					} else {
						environ = append(environ, "SNOWCLAW_CONFIG="+p)
					}
				}
				cfg, _, err := resolveConfig(&fl, environ)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Addr != tt.wantAddr || cfg.Data != tt.wantData || cfg.Owner != tt.wantOwner {
					t.Errorf("got addr %q data %q owner %q, want %q %q %q", cfg.Addr, cfg.Data, cfg.Owner, tt.wantAddr, tt.wantData, tt.wantOwner)
				}
			})
		}
	}
}

func TestConfig_ConfigFlagOverConfigEnv(t *testing.T) {
	fromEnv := writeFile(t, "addr = \"127.0.0.1:1111\"\n")
	fromFlag := writeFile(t, "addr = \"127.0.0.1:2222\"\n")
	fl := serveFlags{config: fromFlag}
	cfg, _, err := resolveConfig(&fl, []string{"SNOWCLAW_CONFIG=" + fromEnv})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:2222" {
		t.Errorf("--config should win over SNOWCLAW_CONFIG; addr = %q", cfg.Addr)
	}
}

func TestConfig_BadConfigNamesTheKey(t *testing.T) {
	tests := []struct {
		name  string
		file  string // TOML, or "" for none
		env   []string
		flags serveFlags
		want  []string // substrings of the error
	}{
		{name: "UnknownFileKey", file: "[limits]\nmax_limt = 5\n", want: []string{"unknown key", "limits.max_limt"}},
		{name: "UnknownTopLevelKey", file: "adr = \"127.0.0.1:1\"\n", want: []string{"unknown key", "adr"}},
		{name: "BadOwnerFlag", flags: serveFlags{owner: "npub1nope"}, want: []string{"owner", "npub1nope"}},
		{name: "BadOwnerHex", file: "owner = \"abcd\"\n", want: []string{"owner", "abcd"}},
		{name: "BadOwnerEnv", env: []string{"SNOWCLAW_OWNER=" + strings.Repeat("z", 64)}, want: []string{"owner", "not hex"}},
		{name: "BadCreator", file: "[groups]\ncreators = [\"bob\"]\n", want: []string{"groups.creators", "bob"}},
		{name: "BadAddrNoPort", flags: serveFlags{addr: "127.0.0.1"}, want: []string{"addr", "127.0.0.1"}},
		{name: "BadAddrPort", file: "addr = \"127.0.0.1:99999\"\n", want: []string{"addr", "99999"}},
		{name: "BadAddrHostname", env: []string{"SNOWCLAW_ADDR=example.com:80"}, want: []string{"addr", "example.com:80"}},
		{name: "NegativeLimit", file: "[limits]\nmax_limit = -1\n", want: []string{"limits.max_limit", "positive"}},
		{name: "ZeroLimitEnv", env: []string{"SNOWCLAW_LIMITS_MAX_TAGS=0"}, want: []string{"limits.max_tags", "positive"}},
		{name: "NotANumberEnv", env: []string{"SNOWCLAW_LIMITS_MAX_TAGS=lots"}, want: []string{"SNOWCLAW_LIMITS_MAX_TAGS", "lots"}},
		{name: "DefaultAboveMax", file: "[limits]\nmax_limit = 10\ndefault_limit = 20\n", want: []string{"limits.default_limit", "limits.max_limit"}},
		{name: "MessageBelowEvent", file: "[limits]\nmax_message_bytes = 1000\nmax_event_bytes = 2000\n", want: []string{"limits.max_message_bytes"}},
		{name: "BadDurationFile", file: "[groups]\nmax_moderation_age = \"soon\"\n", want: []string{"groups.max_moderation_age", "soon"}},
		{name: "BadDurationEnv", env: []string{"SNOWCLAW_GROUPS_MAX_MODERATION_AGE=soon"}, want: []string{"SNOWCLAW_GROUPS_MAX_MODERATION_AGE", "soon"}},
		{name: "ZeroDuration", file: "[groups]\nmax_event_age = \"0s\"\n", want: []string{"groups.max_event_age", "positive"}},
		{name: "BadServiceURL", file: "[relay]\nservice_url = \"http://relay.example.com\"\n", want: []string{"relay.service_url", "http://relay.example.com"}},
		{name: "ServiceURLNoHost", env: []string{"SNOWCLAW_RELAY_SERVICE_URL=wss://"}, want: []string{"relay.service_url"}},
		{name: "BadPostingPolicy", file: "[relay]\nposting_policy = \"ftp://relay.example.com/policy\"\n", want: []string{"relay.posting_policy", "ftp://"}},
		{name: "PrivacyPolicyNoHost", env: []string{"SNOWCLAW_RELAY_PRIVACY_POLICY=https://"}, want: []string{"relay.privacy_policy"}},
		{name: "ZeroMaxSubscriptions", env: []string{"SNOWCLAW_LIMITS_MAX_SUBSCRIPTIONS=0"}, want: []string{"limits.max_subscriptions", "positive"}},
		{name: "InstanceIDControlEnv", env: []string{"SNOWCLAW_RELAY_INSTANCE_ID=relay\n1"}, want: []string{"relay.instance_id"}},
		{name: "InstanceIDTooLong", file: "[relay]\ninstance_id = \"" + strings.Repeat("x", 129) + "\"\n", want: []string{"relay.instance_id", "128"}},
		{name: "BadTrustedProxyFile", file: "[relay]\ntrusted_proxies = [\"10.0.0.0/8\", \"proxy.local\"]\n", want: []string{"relay.trusted_proxies", "proxy.local"}},
		{name: "BadTrustedProxyEnv", env: []string{"SNOWCLAW_RELAY_TRUSTED_PROXIES=127.0.0.1, 10.0.0.0/40"}, want: []string{"relay.trusted_proxies", "10.0.0.0/40"}},
		{name: "BadLogLevel", flags: serveFlags{logLevel: "loud"}, want: []string{"log_level", "loud"}},
		{name: "NegativeMinFree", file: "[store]\nmin_free_mb = -1\n", want: []string{"store.min_free_mb", "-1"}},
		{name: "HugeMinFreeEnv", env: []string{"SNOWCLAW_STORE_MIN_FREE_MB=9999999999"}, want: []string{"store.min_free_mb"}},
		{name: "MinFreeNotANumber", env: []string{"SNOWCLAW_STORE_MIN_FREE_MB=lots"}, want: []string{"SNOWCLAW_STORE_MIN_FREE_MB", "lots"}},
		{name: "UnknownBackend", env: []string{"SNOWCLAW_STORE_BACKEND=mysql"}, want: []string{"store.backend", "mysql", "postgres"}},
		{name: "PostgresWithoutURL", file: "[store]\nbackend = \"postgres\"\n", want: []string{"store.postgres_url", "needs a URL"}},
		{name: "URLWithoutPostgres", env: []string{"SNOWCLAW_STORE_POSTGRES_URL=postgres://u@db/x"}, want: []string{"store.postgres_url", "store.backend"}},
		{name: "BadPostgresURL", flags: serveFlags{storeURL: "postgres://snow:s3cret@db:notaport/x"}, want: []string{"store.postgres_url", "not a PostgreSQL URL"}},
		{name: "NegativeRate", file: "[rate_limits]\nevents_burst_ip = -1\n", want: []string{"rate_limits.events_", "negative"}},
		{name: "BurstZeroWithRate", env: []string{"SNOWCLAW_RATE_LIMITS_QUERIES_BURST_IP=0"}, want: []string{"rate_limits.queries_", "burst"}},
		{name: "NaNRateFile", file: "[rate_limits]\nqueries_per_second_ip = nan\n", want: []string{"rate_limits.queries_", "finite"}},
		{name: "InfRateEnv", env: []string{"SNOWCLAW_RATE_LIMITS_EVENTS_PER_SECOND_PUBKEY=+Inf"}, want: []string{"rate_limits.events_", "finite"}},
		{name: "WrongType", file: "[limits]\nmax_tags = \"many\"\n", want: []string{"limits.max_tags"}},
		{name: "MissingFile", flags: serveFlags{config: "/nonexistent/snowclaw.toml"}, want: []string{"/nonexistent/snowclaw.toml"}},
		{name: "SyntaxError", file: "addr = \n", want: []string{"line 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := tt.flags
			if tt.file != "" {
				fl.config = writeFile(t, tt.file)
			}
			_, _, err := resolveConfig(&fl, tt.env)
			if err == nil {
				t.Fatalf("config accepted; want an error mentioning %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestConfig_AllProblemsAtOnce(t *testing.T) {
	fl := serveFlags{addr: "nope", owner: "nope", logLevel: "nope"}
	_, _, err := resolveConfig(&fl, []string{"SNOWCLAW_LIMITS_MAX_LIMIT=-5"})
	if err == nil {
		t.Fatal("config accepted")
	}
	for _, key := range []string{"addr:", "owner:", "log_level:", "limits.max_limit:"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error does not report %s:\n%v", key, err)
		}
	}
}

func TestConfig_IgnoresOtherEnv(t *testing.T) {
	env := []string{"HOME=/root", "SNOWCLAW_SEC=x", "SNOWCLAWX=1", "SNOWCLAW_CONFIG=", "NOEQUALS"}
	var fl serveFlags
	if _, _, err := resolveConfig(&fl, env); err != nil {
		t.Errorf("unrelated environment rejected: %v", err)
	}
}

func TestRun_ServeAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"serve", "--addr", addr, "--data", t.TempDir()}, nil, &stdout, &stderr)
	if err == nil {
		t.Fatal("serve on a port in use returned no error")
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("error does not mention %s: %v", addr, err)
	}
}

func TestRun_ServeBadConfig(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--data", t.TempDir()}, []string{"SNOWCLAW_LIMITS_MAX_LIMIT=-1"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "limits.max_limit") {
		t.Errorf("serve with a bad config: err = %v", err)
	}
}

func TestRun_UnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serv"}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(stderr.String(), `"serv"`) {
		t.Errorf("unknown command: err = %v, stderr = %q", err, stderr.String())
	}
}

// TestConfig_InstanceID: the name the leader election records is the
// configured relay.instance_id (file or SNOWCLAW_RELAY_INSTANCE_ID), else
// the host name.
func TestConfig_InstanceID(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"default", nil, host},
		{"env", []string{"SNOWCLAW_RELAY_INSTANCE_ID=relay-eu-2"}, "relay-eu-2"},
	} {
		cfg, _, err := resolveConfig(&serveFlags{}, c.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := nodeOptions(cfg, relay.Keys{}, newLogger(&bytes.Buffer{}, "error")).InstanceID; got != c.want {
			t.Errorf("%s: instance %q, want %q", c.name, got, c.want)
		}
	}
}

// TestConfig_LimitsReachTheRelay: the [limits] table decodes into the
// relay's own policies.Limits, from the file and the environment alike,
// and the frame cap beside it goes to the websocket.
func TestConfig_LimitsReachTheRelay(t *testing.T) {
	path := writeFile(t, "[limits]\nmax_tags = 7\nmax_future_seconds = 60\nmax_message_bytes = 300000\n")
	cfg, _, err := resolveConfig(&serveFlags{config: path}, []string{"SNOWCLAW_LIMITS_MAX_FILTERS=3", "SNOWCLAW_LIMITS_MAX_FUTURE_SECONDS=90"})
	if err != nil {
		t.Fatal(err)
	}
	o := nodeOptions(cfg, relay.Keys{}, newLogger(&bytes.Buffer{}, "error"))
	want := policies.DefaultLimits()
	want.MaxTags, want.MaxFutureSeconds, want.MaxFilters = 7, 90, 3
	if o.Limits != want || o.MaxMessageBytes != 300000 {
		t.Errorf("relay limits %+v, frame cap %d\nwant %+v, 300000", o.Limits, o.MaxMessageBytes, want)
	}
	if _, _, err := resolveConfig(&serveFlags{}, []string{"SNOWCLAW_LIMITS_MAX_FUTURE_SECONDS=1e3"}); err == nil || !strings.Contains(err.Error(), "SNOWCLAW_LIMITS_MAX_FUTURE_SECONDS") {
		t.Errorf("a number that is not whole: %v", err)
	}
}
