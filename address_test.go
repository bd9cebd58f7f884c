package snowclaw

import (
	"errors"
	"testing"
)

func TestAddress(t *testing.T) {
	pk := "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	for _, c := range []struct {
		kind    int
		pubkey  string
		d, want string
	}{
		{30078, pk, "m/private/x", "30078:" + pk + ":m/private/x"},
		{10002, pk, "", "10002:" + pk + ":"},
		{30078, pk, "snowclaw:memory:a:b", "30078:" + pk + ":snowclaw:memory:a:b"},
		{0, "", "", "0::"},
	} {
		if got := Address(c.kind, c.pubkey, c.d); got != c.want {
			t.Errorf("Address(%d, %q, %q) = %q, want %q", c.kind, c.pubkey, c.d, got, c.want)
		}
	}
}

func TestParseAddress(t *testing.T) {
	pk := "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	for _, c := range []struct {
		in     string
		kind   int
		pubkey string
		d      string
		bad    bool
	}{
		{in: "30078:" + pk + ":m/private/x", kind: 30078, pubkey: pk, d: "m/private/x"},
		{in: "30078:" + pk + ":snowclaw:memory:a:b", kind: 30078, pubkey: pk, d: "snowclaw:memory:a:b"},
		{in: "10002:" + pk + ":", kind: 10002, pubkey: pk},
		{in: "30078::m/private/x", kind: 30078, d: "m/private/x"},
		{in: "0:junk:d", kind: 0, pubkey: "junk", d: "d"},
		{in: "", bad: true},
		{in: "30078", bad: true},
		{in: "30078:" + pk, bad: true},
		{in: "030078:" + pk + ":d", bad: true},
		{in: "+30078:" + pk + ":d", bad: true},
		{in: "-1:" + pk + ":d", bad: true},
		{in: " 30078:" + pk + ":d", bad: true},
		{in: "x:" + pk + ":d", bad: true},
		{in: "99999999999999999999:" + pk + ":d", bad: true},
	} {
		kind, pubkey, d, err := ParseAddress(c.in)
		if c.bad {
			var ae *AddressError
			if !errors.Is(err, ErrAddress) || !errors.As(err, &ae) || ae.Address != c.in {
				t.Errorf("ParseAddress(%q) err = %v, want an *AddressError", c.in, err)
			}
			continue
		}
		if err != nil || kind != c.kind || pubkey != c.pubkey || d != c.d {
			t.Errorf("ParseAddress(%q) = %d, %q, %q, %v; want %d, %q, %q", c.in, kind, pubkey, d, err, c.kind, c.pubkey, c.d)
			continue
		}
		if back := Address(kind, pubkey, d); back != c.in {
			t.Errorf("Address(ParseAddress(%q)) = %q", c.in, back)
		}
	}
}
