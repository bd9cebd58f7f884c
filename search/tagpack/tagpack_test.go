package tagpack

import (
	"reflect"
	"testing"
	"unsafe"
)

func TestPackUnpack(t *testing.T) {
	tests := []struct {
		name string
		tags map[string][]string
	}{
		{"Nil", nil},
		{"Memory", map[string][]string{"d": {"snow:memory:project/x"}, "t": {"decision", "infra"}}},
		{"Empty values", map[string][]string{"-": {""}, "p": {"a", "b", "a"}}},
		{"Repeated names keep their order", map[string][]string{"e": {"3", "1", "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Pack(tt.tags, "snow:memory:project/x", nil, nil)
			if got := Unpack(p); !reflect.DeepEqual(got, tt.tags) && !(len(got) == 0 && len(tt.tags) == 0) {
				t.Fatalf("Unpack(Pack(%v)) = %v", tt.tags, got)
			}
			for k, vs := range tt.tags {
				if got := Values(p, k); !reflect.DeepEqual(got, vs) {
					t.Fatalf("Values(%q) = %v, want %v", k, got, vs)
				}
			}
			if got := Values(p, "absent"); got != nil {
				t.Fatalf("Values(absent) = %v", got)
			}
		})
	}
}

// TestPack_Shares: the d value reuses the doc's d, and names and shared
// values come from intern: no bytes of their own per doc.
func TestPack_Shares(t *testing.T) {
	pool := map[string]string{}
	intern := func(s string) string {
		if c, ok := pool[s]; ok {
			return c
		}
		pool[s] = s
		return s
	}
	d := "snow:memory:x"
	dCopy := string([]byte(d))
	p1 := Pack(map[string][]string{"d": {dCopy}, "t": {string([]byte("infra"))}, "x": {string([]byte("own"))}}, d, intern, func(k string) bool { return k == "t" })
	p2 := Pack(map[string][]string{"t": {string([]byte("infra"))}}, "", intern, func(k string) bool { return k == "t" })
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	if !same(Values(p1, "d")[0], d) {
		t.Fatal("d value not shared with the doc's d")
	}
	if !same(Values(p1, "t")[0], Values(p2, "t")[0]) {
		t.Fatal("t value not interned")
	}
	if _, ok := pool["own"]; ok {
		t.Fatal("a value of a name not shared was interned")
	}
	if !same(p1[2], p2[0]) { // the name "t" (names sorted: d, t, x)
		t.Fatal("names not interned")
	}
}
