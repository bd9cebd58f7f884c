package snowclaw_test

import (
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// The cost of the group tier per memory (docs/group-encryption.md "Cost"):
// sealing on write, opening on the write check, the index and the agent.
func BenchmarkGroupSeal(b *testing.B) {
	k, _ := snowclaw.NewGroupKey(1)
	plain := `{"summary":"` + strings.Repeat("the launch moved to March ", 20) + `"}`
	sealed, _ := snowclaw.SealGroupContent(plain, k)
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			if _, err := snowclaw.SealGroupContent(plain, k); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := snowclaw.OpenGroupContent(sealed, k); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("newkey", func(b *testing.B) {
		for b.Loop() {
			if _, err := snowclaw.NewGroupKey(2); err != nil {
				b.Fatal(err)
			}
		}
	})
}
