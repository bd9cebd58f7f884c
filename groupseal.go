package snowclaw

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// The encrypted group tier (docs/group-encryption.md): a group memory whose
// content is a NIP-44 v2 payload under a key the whole group shares.
//
// A group key is a secp256k1 secret. Its conversation key is the NIP-44
// conversation key between that secret and its own public key, exactly
// what NIP-44's get_conversation_key(group_secret, group_pubkey) returns:
// "encrypting to oneself" with the group's key. Every NIP-44 library
// exposes that function, so a client needs nothing but NIP-44 to read a
// group memory; a raw HKDF of the secret would need the lower layer most
// libraries keep private. The public half names the key in deliveries
// (a client checks that the secret it was sent is the key it claims to be).

const (
	// EncryptionGroup is the value of ["encrypted", …] on a group-key
	// memory; "nip44" is the agent's own conversations (seal.go).
	EncryptionGroup = "nip44-group"
	// TagKeyVersion names the group key version that sealed a memory:
	// ["snow:key-version", "3"].
	TagKeyVersion = "snow:key-version"
	// GroupKeyMessageType is the "type" of a key delivery's JSON and the
	// name of its rumor tag (["snow:group-key", group]).
	GroupKeyMessageType = "snow:group-key"
)

var (
	// ErrNoGroupKey: a group memory sealed with a key version the holder
	// does not have. It is an ErrDecrypt.
	ErrNoGroupKey = fmt.Errorf("%w: no key for this group key version", ErrDecrypt)
	// ErrGroupSealShape: the group encryption markers are malformed.
	ErrGroupSealShape = errors.New("malformed group-encrypted event")
	// ErrKeyNotFromAgent: a key delivery not written by the relay's agent.
	ErrKeyNotFromAgent = errors.New("group key delivery not from the relay's agent")
)

// GroupKey is one version of a group's key.
type GroupKey struct {
	Version int    `json:"version"`
	Secret  string `json:"secret"` // 64 lowercase hex
	Pubkey  string `json:"pubkey"` // the secret's x-only public key, hex
}

// NewGroupKey makes a fresh random key for version.
func NewGroupKey(version int) (GroupKey, error) {
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil || len(sk) != 64 {
		return GroupKey{}, errors.New("cannot generate a group key")
	}
	return GroupKey{Version: version, Secret: sk, Pubkey: pk}, nil
}

// Check reports whether k is a usable key whose public half is its own.
// Errors never quote the secret.
func (k GroupKey) Check() error {
	if k.Version <= 0 {
		return fmt.Errorf("group key version %d: must be positive", k.Version)
	}
	if len(k.Secret) != 64 || strings.ToLower(k.Secret) != k.Secret {
		return fmt.Errorf("group key version %d: secret is not 64 lowercase hex", k.Version)
	}
	if _, err := hex.DecodeString(k.Secret); err != nil {
		return fmt.Errorf("group key version %d: secret is not hex", k.Version)
	}
	pk, err := nostr.GetPublicKey(k.Secret)
	if err != nil || pk != k.Pubkey {
		return fmt.Errorf("group key version %d: secret does not belong to public key %s", k.Version, k.Pubkey)
	}
	return nil
}

// convKeys caches conversation keys: deriving one is a scalar
// multiplication, about 50 times the cost of sealing a memory once it is
// known (BenchmarkGroupSeal), and the relay opens every group memory it
// is written, indexed or recalled. Bounded: cleared when full.
var convKeys = struct {
	sync.Mutex
	m map[GroupKey][32]byte
}{m: make(map[GroupKey][32]byte)}

const maxConvKeys = 4096

func (k GroupKey) conversationKey() ([32]byte, error) {
	convKeys.Lock()
	ck, ok := convKeys.m[k]
	convKeys.Unlock()
	if ok {
		return ck, nil
	}
	ck, err := nip44.GenerateConversationKey(k.Pubkey, k.Secret)
	if err != nil {
		return ck, fmt.Errorf("group key version %d: conversation key: %w", k.Version, err)
	}
	convKeys.Lock()
	if len(convKeys.m) >= maxConvKeys {
		clear(convKeys.m)
	}
	convKeys.m[k] = ck
	convKeys.Unlock()
	return ck, nil
}

// SealGroupContent encrypts plain under k (a NIP-44 v2 payload).
func SealGroupContent(plain string, k GroupKey, opts ...func(*nip44Options)) (string, error) {
	ck, err := k.conversationKey()
	if err != nil {
		return "", err
	}
	var o nip44Options
	for _, f := range opts {
		f(&o)
	}
	var out string
	if o.nonce != nil {
		out, err = nip44.Encrypt(plain, ck, nip44.WithCustomNonce(o.nonce))
	} else {
		out, err = nip44.Encrypt(plain, ck)
	}
	if err != nil {
		return "", fmt.Errorf("nip44 encrypt: %w", err)
	}
	return out, nil
}

// nip44Options lets the test vector fix the nonce; nobody else should.
type nip44Options struct{ nonce []byte }

// WithNonce fixes NIP-44's 32-byte nonce (test vectors only: a repeated
// nonce under one key breaks the encryption).
func WithNonce(nonce []byte) func(*nip44Options) {
	return func(o *nip44Options) { o.nonce = nonce }
}

// OpenGroupContent decrypts a payload sealed under k.
func OpenGroupContent(payload string, k GroupKey) (string, error) {
	ck, err := k.conversationKey()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	plain, err := nip44.Decrypt(payload, ck)
	if err != nil {
		return "", fmt.Errorf("%w with group key version %d: %v", ErrDecrypt, k.Version, err)
	}
	return plain, nil
}

// GroupSealOf checks the shape of a group-encrypted event and returns its
// group and key version: a kind 30078 memory or agent record, exactly one
// ["encrypted","nip44-group"], one valid h tag, no p tag (it is nobody's
// private memory), and one ["snow:key-version", n] with n a positive
// decimal. Errors are ErrGroupSealShape.
func GroupSealOf(e *Event) (group string, version int, err error) {
	bad := func(format string, args ...any) (string, int, error) {
		return "", 0, fmt.Errorf("%w: %s", ErrGroupSealShape, fmt.Sprintf(format, args...))
	}
	if e.Kind != KindAppData {
		return bad("group encryption is for kind %d memories, not kind %d", KindAppData, e.Kind)
	}
	if e.Namespace != NamespaceMemoryItem && e.Namespace != NamespaceMemoryGroup {
		return bad("group encryption is for snow:memory: items and the agent's group records")
	}
	if e.encryptedTags != 1 || !e.GroupSealed {
		return bad(`a group-encrypted event carries exactly one ["encrypted","nip44-group"]`)
	}
	if e.pTags > 0 {
		return bad("a group-encrypted event names no person (p tag)")
	}
	if e.GroupErr != nil || e.Group == "" {
		return bad("a group-encrypted event names its group in one h tag")
	}
	vs := TagValues(e.Event, TagKeyVersion)
	if len(vs) != 1 || !onlyTag(e.Event, TagKeyVersion) {
		return bad(`a group-encrypted event carries exactly one ["%s", <version>]`, TagKeyVersion)
	}
	v, cerr := strconv.Atoi(vs[0])
	if cerr != nil || v <= 0 || strconv.Itoa(v) != vs[0] {
		return bad("key version %q is not a positive decimal number", vs[0])
	}
	return e.Group, v, nil
}

// onlyTag reports whether evt carries exactly one tag named key, of any
// form.
func onlyTag(evt *nostr.Event, key string) bool {
	n := 0
	for _, t := range evt.Tags {
		if len(t) >= 1 && t[0] == key {
			n++
		}
	}
	return n == 1
}

// OpenGroup returns the plain content of a group-encrypted event, with the
// key keyOf gives for its group and version (false: ErrNoGroupKey).
func OpenGroup(evt *Event, keyOf func(group string, version int) (GroupKey, bool)) (string, error) {
	g, v, err := GroupSealOf(evt)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	k, ok := keyOf(g, v)
	if !ok {
		return "", fmt.Errorf("%w (group %s, version %d)", ErrNoGroupKey, g, v)
	}
	return OpenGroupContent(evt.Content, k)
}

// SealGroupEvent turns evt (a group memory in plain) into its sealed form
// under k: content encrypted, any old encryption markers replaced. The
// caller signs it afterwards.
func SealGroupEvent(evt *nostr.Event, k GroupKey) error {
	sealed, err := SealGroupContent(evt.Content, k)
	if err != nil {
		return err
	}
	tags := make(nostr.Tags, 0, len(evt.Tags)+2)
	for _, t := range evt.Tags {
		if len(t) >= 1 && (t[0] == "encrypted" || t[0] == TagKeyVersion) {
			continue
		}
		tags = append(tags, t)
	}
	evt.Tags = append(tags, nostr.Tag{"encrypted", EncryptionGroup}, nostr.Tag{TagKeyVersion, strconv.Itoa(k.Version)})
	evt.Content = sealed
	return nil
}

// GroupKeyMessage is the content of a key delivery: the JSON of the kind 14
// rumor the agent sends each member in a NIP-17 gift wrap.
type GroupKeyMessage struct {
	Type    string     `json:"type"`    // GroupKeyMessageType
	Group   string     `json:"group"`   // the group id
	Current int        `json:"current"` // the version new memories are sealed with
	Keys    []GroupKey `json:"keys"`    // the versions delivered, Current among them
}

// Encode is the rumor content of m.
func (m GroupKeyMessage) Encode() string {
	m.Type = GroupKeyMessageType
	b, _ := json.Marshal(m) // plain strings and ints: cannot fail
	return string(b)
}

// ParseGroupKeyMessage reads a key delivery a client unwrapped (NIP-17)
// from from (the rumor's author, which the unwrap checked signed the
// seal). Only the relay's agent (agent, hex) hands out group keys: any
// other author is ErrKeyNotFromAgent, whatever the message says.
func ParseGroupKeyMessage(from, content, agent string) (GroupKeyMessage, error) {
	var m GroupKeyMessage
	if agent == "" || from != agent {
		return m, ErrKeyNotFromAgent
	}
	if err := json.Unmarshal([]byte(content), &m); err != nil {
		return GroupKeyMessage{}, fmt.Errorf("group key message: %w", err)
	}
	if m.Type != GroupKeyMessageType {
		return GroupKeyMessage{}, fmt.Errorf("group key message: type %q, want %q", m.Type, GroupKeyMessageType)
	}
	if m.Group == "" || len(m.Keys) == 0 {
		return GroupKeyMessage{}, errors.New("group key message: no group or no keys")
	}
	current := false
	for _, k := range m.Keys {
		if err := k.Check(); err != nil {
			return GroupKeyMessage{}, fmt.Errorf("group key message: %w", err)
		}
		current = current || k.Version == m.Current
	}
	if !current {
		return GroupKeyMessage{}, fmt.Errorf("group key message: current version %d is not among its keys", m.Current)
	}
	return m, nil
}
