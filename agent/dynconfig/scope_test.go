package dynconfig

import (
	"strings"
	"testing"
)

// A throwaway key pair's public half, in both forms.
const (
	pkHex  = "299ed02e8537779781c1ec09e13bba57bff851297d525cf27dfd4b23a8ced10b"
	pkNpub = "npub19x0dqt59xame0qwpasy7zwa627lls5ff04f9eunal49j82xw6y9sxga6uu"
	pk2Hex = "9c94f3face76306a7f09fed8c0cdcf3bbf8c5f06af617f825c577be6303ebaa9"
)

func TestParseScope(t *testing.T) {
	tests := []struct {
		in      string
		want    Scope
		wantErr string
	}{
		{"global", Scope{Kind: Global}, ""},
		{" global ", Scope{Kind: Global}, ""},
		{"group:techteam", Scope{Kind: Group, ID: "techteam"}, ""},
		{"npub:" + pkNpub, Scope{Kind: Npub, ID: pkHex}, ""},
		{"npub:" + pkHex, Scope{Kind: Npub, ID: pkHex}, ""},
		{"npub:" + strings.ToUpper(pkHex), Scope{Kind: Npub, ID: pkHex}, ""},
		{"npub:" + pkHex[:32], Scope{Kind: Npub, ID: pkHex[:32]}, ""},
		{pkNpub, Scope{Kind: Npub, ID: pkHex}, ""},
		{pkHex, Scope{Kind: Npub, ID: pkHex}, ""},
		{"snowclaw:config:group:techteam", Scope{Kind: Group, ID: "techteam"}, ""},
		{"", Scope{}, "empty scope"},
		{"group:", Scope{}, "without a group id"},
		{"group:two words", Scope{}, "spaces"},
		{"npub:npub1xyz", Scope{}, "not a valid npub"},
		{"npub:abcd", Scope{}, "not a public key"},
		{"user:alice", Scope{}, "want global"},
		{"globals", Scope{}, "want global"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseScope(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseScope(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseScope(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestScope_RoundTrip(t *testing.T) {
	tests := []struct {
		scope     Scope
		str, dtag string
	}{
		{Scope{Kind: Global}, "global", "snowclaw:config:global"},
		{Scope{Kind: Group, ID: "techteam"}, "group:techteam", "snowclaw:config:group:techteam"},
		{Scope{Kind: Npub, ID: pkHex}, "npub:" + pkNpub, "snowclaw:config:npub:" + pkNpub},
		{Scope{Kind: Npub, ID: pkHex[:32]}, "npub:" + pkHex[:32], "snowclaw:config:npub:" + pkHex[:32]},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if got := tt.scope.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.scope.DTag(); got != tt.dtag {
				t.Errorf("DTag() = %q, want %q", got, tt.dtag)
			}
			if got, err := ParseScope(tt.str); err != nil || got != tt.scope {
				t.Errorf("ParseScope(String()) = %+v, %v", got, err)
			}
			if got, err := ScopeOfD(tt.dtag); err != nil || got != tt.scope {
				t.Errorf("ScopeOfD(DTag()) = %+v, %v", got, err)
			}
		})
	}
}

func TestScopeOfD(t *testing.T) {
	tests := []struct {
		d       string
		want    Scope
		wantErr bool
	}{
		{"snowclaw:config:global", Scope{Kind: Global}, false},
		{"snowclaw:config:group:inner-circle", Scope{Kind: Group, ID: "inner-circle"}, false},
		{"snowclaw:config:npub:" + pkNpub, Scope{Kind: Npub, ID: pkHex}, false},
		{"snowclaw:config:npub:" + pkHex, Scope{Kind: Npub, ID: pkHex}, false},
		{"snowclaw:config:npub:" + pkHex[:32], Scope{Kind: Npub, ID: pkHex[:32]}, false},
		{"snowclaw:config:npub:" + pkHex[:40], Scope{}, true},
		{"snowclaw:config:npub:", Scope{}, true},
		{"snowclaw:config:group:", Scope{}, true},
		{"snowclaw:config:channel:x", Scope{}, true},
		{"snowclaw:config:", Scope{}, true},
		{"snowclaw:memory:group:x", Scope{}, true},
		{"", Scope{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.d, func(t *testing.T) {
			got, err := ScopeOfD(tt.d)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ScopeOfD(%q) = %+v, %v; want %+v, error %v", tt.d, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
