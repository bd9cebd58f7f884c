package nostrsig

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// nostrSays is go-nostr's answer: nil, ErrID or ErrSignature.
func nostrSays(evt *nostr.Event) error {
	if !evt.CheckID() {
		return ErrID
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return ErrSignature
	}
	return nil
}

func signed(t testing.TB, sk, content string) nostr.Event {
	evt := nostr.Event{Kind: 1, CreatedAt: 1_700_000_000, Content: content, Tags: nostr.Tags{{"t", "x"}}}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// reID gives evt the id of what it now holds, so that only its
// signature can fail.
func reID(evt nostr.Event) nostr.Event { evt.ID = evt.GetID(); return evt }

// TestVerifier_Cases: every way an id, a key or a signature can be wrong
// gets go-nostr's answer, with the key taken from the cache or not.
func TestVerifier_Cases(t *testing.T) {
	sk, other := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	good := signed(t, sk, "hello")
	otherPK, _ := nostr.GetPublicKey(other)
	ff := strings.Repeat("f", 64)
	// n, the group order: an s of n or more is reduced by btcec, not refused
	n := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
	// 5 is not the x of any point on secp256k1 (x^3+7 is not a square mod p)
	offCurve := strings.Repeat("0", 63) + "5"
	mod := func(f func(e *nostr.Event)) nostr.Event { e := good; e.Tags = nostr.Tags{{"t", "x"}}; f(&e); return e }
	cases := map[string]nostr.Event{
		"valid":             good,
		"content changed":   mod(func(e *nostr.Event) { e.Content = "hellO" }),
		"re-ided content":   reID(mod(func(e *nostr.Event) { e.Content = "hellO" })),
		"short id":          mod(func(e *nostr.Event) { e.ID = e.ID[:63] }),
		"upper-case id":     mod(func(e *nostr.Event) { e.ID = strings.ToUpper(e.ID) }),
		"another's key":     reID(mod(func(e *nostr.Event) { e.PubKey = otherPK })),
		"upper-case key":    reID(mod(func(e *nostr.Event) { e.PubKey = strings.ToUpper(e.PubKey) })),
		"key off the curve": reID(mod(func(e *nostr.Event) { e.PubKey = offCurve })),
		"key x at least p":  reID(mod(func(e *nostr.Event) { e.PubKey = ff })),
		"key not hex":       reID(mod(func(e *nostr.Event) { e.PubKey = "zz" + e.PubKey[2:] })),
		"short key":         reID(mod(func(e *nostr.Event) { e.PubKey = e.PubKey[:62] })),
		"r at least p":      mod(func(e *nostr.Event) { e.Sig = ff + e.Sig[64:] }),
		"s at least n":      mod(func(e *nostr.Event) { e.Sig = e.Sig[:64] + n }),
		"s zero":            mod(func(e *nostr.Event) { e.Sig = e.Sig[:64] + strings.Repeat("0", 64) }),
		"sig flipped bit": mod(func(e *nostr.Event) {
			e.Sig = e.Sig[:127] + string("01"[1-strings.IndexByte("0123456789abcdef", e.Sig[127])%2])
		}),
		"sig of another":     mod(func(e *nostr.Event) { e.Sig = signed(t, sk, "other").Sig }),
		"sig too short":      mod(func(e *nostr.Event) { e.Sig = e.Sig[:126] }),
		"sig too long":       mod(func(e *nostr.Event) { e.Sig += "00" }),
		"sig not hex":        mod(func(e *nostr.Event) { e.Sig = "g" + e.Sig[1:] }),
		"sig all zero":       mod(func(e *nostr.Event) { e.Sig = strings.Repeat("0", 128) }),
		"another's valid ev": signed(t, other, "hi"),
	}
	for _, size := range []int{1, 1000} {
		v := New(size)
		for round := range 2 { // the second round finds the keys cached
			for name, evt := range cases {
				if got, want := v.Check(&evt), nostrSays(&evt); !errors.Is(got, want) && got != want {
					t.Errorf("cache %d, round %d, %s: got %v, go-nostr says %v", size, round, name, got, want)
				}
			}
		}
	}
	if err := New(8).Check(&good); err != nil {
		t.Fatalf("a valid event: %v", err)
	}
}

// FuzzVerifier_SameAnswers: whatever bytes replace parts of a signed
// event, the verifier and go-nostr agree.
func FuzzVerifier_SameAnswers(f *testing.F) {
	sk := nostr.GeneratePrivateKey()
	base := signed(f, sk, "fuzz")
	f.Add(uint8(0), 0, []byte{1})
	f.Add(uint8(1), 5, []byte("ff"))
	f.Add(uint8(2), 64, []byte("0"))
	f.Add(uint8(3), 0, []byte("x"))
	v := New(4)
	f.Fuzz(func(t *testing.T, which uint8, at int, patch []byte) {
		evt := base
		evt.Tags = nostr.Tags{{"t", "x"}}
		put := func(s string) string {
			if len(s) == 0 {
				return string(patch)
			}
			i := ((at % len(s)) + len(s)) % len(s)
			return s[:i] + string(patch) + s[min(len(s), i+len(patch)):]
		}
		switch which % 4 {
		case 0:
			evt.Sig = put(evt.Sig)
		case 1:
			evt.PubKey = put(evt.PubKey)
			evt.ID = evt.GetID()
		case 2:
			evt.Content = put(evt.Content)
		case 3:
			evt.ID = put(evt.ID)
		}
		if got, want := v.Check(&evt), nostrSays(&evt); got != want {
			t.Fatalf("%+v: got %v, go-nostr says %v", evt, got, want)
		}
	})
}

func BenchmarkVerifier(b *testing.B) {
	evt := signed(b, nostr.GeneratePrivateKey(), "a note of about twenty four words of chat in a group, like the benchmark's")
	v := New(16)
	for b.Loop() {
		if v.Check(&evt) != nil {
			b.Fatal("does not verify")
		}
	}
}

func BenchmarkGoNostr(b *testing.B) {
	evt := signed(b, nostr.GeneratePrivateKey(), "a note of about twenty four words of chat in a group, like the benchmark's")
	for b.Loop() {
		if nostrSays(&evt) != nil {
			b.Fatal("does not verify")
		}
	}
}

// TestVerify_BIP340Vectors: the verification vectors of BIP-340
// (test-vectors.csv, those with a 32-byte message), among them an R with
// an odd y, a negated message or s, r at infinity, and a key off the
// curve or not below p.
func TestVerify_BIP340Vectors(t *testing.T) {
	for i, tc := range []struct {
		pk, msg, sig string
		valid        bool
	}{
		{"F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9", "0000000000000000000000000000000000000000000000000000000000000000", "04E7F9037658A92AFEB4F25BAE5339E3DDCA81A353493827D26F16D92308E49E2A25E92208678A2DF86970DA91B03A8AF8815A8A60498B358DAF560B347AA557", true},
		{"F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9", "0000000000000000000000000000000000000000000000000000000000000000", "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA821525F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0", true},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE33418906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A", true},
		{"DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8", "7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C", "5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1BAB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7", true},
		{"25D1DFF95105F5253C4022F628A996AD3A0D95FBF21D468A1B33F8C160D8F517", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", "7EB0509757E246F19449885651611CB965ECC1A187DD51B64FDA1EDC9637D5EC97582B9CB13DB3933705B32BA982AF5AF25FD78881EBB32771FC5922EFC66EA3", true},
		{"D69C3509BB99E412E68B0FE8544E72837DFA30746D8BE2AA65975F29D22DC7B9", "4DF3C3F68FCC83B27E9D42C90431A72499F17875C81A599B566C9889B9696703", "00000000000000000000003B78CE563F89A0ED9414F5AA28AD0D96D6795F9C6376AFB1548AF603B3EB45C9F8207DEE1060CB71C04E80F593060B07D28308D7F4", true},
		{"EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E17776969E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "FFF97BD5755EEEA420453A14355235D382F6472F8568A18B2F057A14602975563CC27944640AC607CD107AE10923D9EF7A73C643E166BE5EBEAFA34B1AC553E2", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "1FA62E331EDBC21C394792D2AB1100A7B432B013DF3F6FF4F99FCB33E0E1515F28890B3EDB6E7189B630448B515CE4F8622A954CFE545735AAEA5134FCCDB2BD", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769961764B3AA9B2FFCB6EF947B6887A226E8D7C93E00C5ED0C1834FF0D0C2E6DA6", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "0000000000000000000000000000000000000000000000000000000000000000123DDA8328AF9C23A94C1FEECFD123BA4FB73476F0D594DCB65C6425BD186051", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "00000000000000000000000000000000000000000000000000000000000000017615FBAF5AE28864013C099742DEADB4DBA87F11AC6754F93780D5A1837CF197", false},
		{"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "4A298DACAE57395A15D0795DDBFD1DCB564DA82B0F269BC70A74F8220429BA1D69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B", false},
		{"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC30", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89", "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E17776969E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B", false},
	} {
		pkb, _ := hex.DecodeString(tc.pk)
		msg, _ := hex.DecodeString(tc.msg)
		sigb, _ := hex.DecodeString(tc.sig)
		got := false
		if pk, ok := New(2).key([32]byte(pkb)); ok {
			got = verify(msg, (*[64]byte)(sigb), pk, pkb)
		}
		if got != tc.valid {
			t.Errorf("vector %d: verified %v, want %v", i, got, tc.valid)
		}
	}
}
