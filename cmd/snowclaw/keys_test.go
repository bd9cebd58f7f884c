package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/relay"
)

// The relay's and the agent's keys: created private, read in every form,
// printed by snowclaw keys and keygen.

func TestKeys_CreatedPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, sk string }{{relay.RelayKeyFile, keys.RelaySecret}, {relay.AgentKeyFile, keys.AgentSecret}} {
		st, err := os.Stat(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", f.name, st.Mode().Perm())
		}
		if _, err := nostr.GetPublicKey(f.sk); err != nil || len(f.sk) != 64 {
			t.Errorf("%s holds %q, not a secret key", f.name, f.sk)
		}
	}
	if keys.RelaySecret == keys.AgentSecret {
		t.Error("relay and agent share one key")
	}
	again, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if again != keys {
		t.Error("loading the keys a second time gave other keys")
	}
}

func TestKeys_Cases(t *testing.T) {
	nsec, err := nip19.EncodePrivateKey(ownerSK)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		content   string
		mode      os.FileMode
		create    bool
		wantRelay string // hex secret expected, if no error
		wantErr   []string
	}{
		{name: "Nsec", content: nsec + "\n", mode: 0o600, wantRelay: ownerSK},
		{name: "Hex", content: "  " + strings.ToUpper(ownerSK) + "\n", mode: 0o600, wantRelay: ownerSK},
		{name: "ReadableByOthers", content: ownerSK, mode: 0o644, wantErr: []string{"chmod", relay.RelayKeyFile}},
		{name: "ReadableByOthersEvenWithCreate", content: ownerSK, mode: 0o640, create: true, wantErr: []string{"chmod"}},
		{name: "Garbage", content: "hello", mode: 0o600, wantErr: []string{relay.RelayKeyFile, "not a secret key"}},
		{name: "BadNsec", content: "nsec1qqqq", mode: 0o600, wantErr: []string{relay.RelayKeyFile, "nsec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, relay.RelayKeyFile)
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, relay.AgentKeyFile), []byte(otherSK), 0o600); err != nil {
				t.Fatal(err)
			}
			keys, err := relay.LoadKeys(dir, tt.create)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("key file accepted; want an error mentioning %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not mention %q: %v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if keys.RelaySecret != tt.wantRelay || keys.AgentSecret != otherSK {
				t.Errorf("got %+v, want relay %s agent %s", keys, tt.wantRelay, otherSK)
			}
		})
	}
}

func TestKeys_MissingWithoutCreate(t *testing.T) {
	dir := t.TempDir()
	_, err := relay.LoadKeys(dir, false)
	if err == nil || !strings.Contains(err.Error(), relay.RelayKeyFile) {
		t.Errorf("missing key file: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, relay.RelayKeyFile)); err == nil {
		t.Error("LoadKeys without create made a key file")
	}
}

func TestRun_KeysPrintsBothKeys(t *testing.T) {
	dir := t.TempDir()
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"keys", "--data", dir}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("keys: %v (stderr %s)", err, stderr.String())
	}
	out := stdout.String()
	for _, k := range []struct{ name, sk string }{{"relay", keys.RelaySecret}, {"agent", keys.AgentSecret}} {
		pk := mustPub(k.sk)
		want := fmt.Sprintf("%s: %s %s", k.name, mustNpub(pk), pk)
		if !strings.Contains(out, want) {
			t.Errorf("keys output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, keys.RelaySecret) || strings.Contains(out, keys.AgentSecret) {
		t.Error("keys printed a secret key")
	}
}

func TestRun_KeysMissingDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"keys", "--data", dir}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("keys on an empty data dir: err = %v", err)
	}
}

func TestRun_KeygenMatches(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"keygen"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("unexpected keygen line %q", line)
		}
		got[k] = v
	}
	prefix, sk, err := nip19.Decode(got["nsec"])
	if err != nil || prefix != "nsec" {
		t.Fatalf("keygen nsec %q does not decode: %v", got["nsec"], err)
	}
	prefix, pk, err := nip19.Decode(got["npub"])
	if err != nil || prefix != "npub" {
		t.Fatalf("keygen npub %q does not decode: %v", got["npub"], err)
	}
	if want := mustPub(sk.(string)); pk != want {
		t.Errorf("npub is %s, but the nsec's public key is %s", pk, want)
	}
	if got["secret hex"] != sk || got["public hex"] != pk {
		t.Errorf("hex lines %q %q do not match nsec/npub %s %s", got["secret hex"], got["public hex"], sk, pk)
	}
}
