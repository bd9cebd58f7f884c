package relay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// Key file names inside the data directory.
const (
	RelayKeyFile = "relay.key"
	AgentKeyFile = "agent.key"
)

// Keys are the relay's own secret keys, hex.
type Keys struct {
	RelaySecret string
	AgentSecret string
}

// LoadKeys reads the relay and agent keys from dataDir. With create, a
// missing key file is generated (mode 0600); without it, a missing file
// is an error.
func LoadKeys(dataDir string, create bool) (Keys, error) {
	rk, err := loadKey(filepath.Join(dataDir, RelayKeyFile), create)
	if err != nil {
		return Keys{}, err
	}
	ak, err := loadKey(filepath.Join(dataDir, AgentKeyFile), create)
	if err != nil {
		return Keys{}, err
	}
	return Keys{RelaySecret: rk, AgentSecret: ak}, nil
}

func loadKey(path string, create bool) (string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return "", fmt.Errorf("key file %s does not exist; start the relay once with this data directory to create it", path)
		}
		return createKey(path)
	}
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("key file %s is readable by others (mode %04o); run: chmod 600 %s", path, st.Mode().Perm(), path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	sk, err := snowclaw.ParseSecret(strings.TrimSpace(string(raw)))
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	return sk, nil
}

func createKey(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating data directory: %w", err)
	}
	sk := nostr.GeneratePrivateKey()
	// O_EXCL: two processes starting at once must not overwrite each
	// other's fresh key
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("creating key file %s: %w", path, err)
	}
	if _, err := f.WriteString(sk + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("writing key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", fmt.Errorf("writing key file %s: %w", path, err)
	}
	return sk, f.Close()
}

// Identities are the public keys of owner (hex, may be empty) and of k.
func (k Keys) Identities(owner string) (policies.Identities, error) {
	relayPK, err := nostr.GetPublicKey(k.RelaySecret)
	if err != nil {
		return policies.Identities{}, fmt.Errorf("relay key: %w", err)
	}
	agentPK, err := nostr.GetPublicKey(k.AgentSecret)
	if err != nil {
		return policies.Identities{}, fmt.Errorf("agent key: %w", err)
	}
	return policies.Identities{Owner: owner, Relay: relayPK, Agent: agentPK}, nil
}
