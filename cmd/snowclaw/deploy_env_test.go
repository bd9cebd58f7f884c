package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDeploy_EnvNamesAreSettings: every SNOWCLAW_* variable the
// deployment examples set is one the relay knows. An unknown one is only
// warned about, so a typo there would be a setting that never applies.
func TestDeploy_EnvNamesAreSettings(t *testing.T) {
	root := filepath.Join("..", "..")
	name := regexp.MustCompile(`SNOWCLAW_[A-Z0-9_]+`)
	seen := 0
	for _, f := range []string{"Dockerfile", "deploy/compose.yaml", "deploy/snowclaw.service", "deploy/Caddyfile", "deploy/nginx.conf"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range name.FindAllString(string(b), -1) {
			seen++
			cfg := DefaultConfig()
			if ignored, _ := loadEnv(&cfg, []string{v + "=x"}); len(ignored) > 0 {
				t.Errorf("%s sets %s, which the relay does not know", f, v)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no SNOWCLAW_* variable found: the pattern or the files moved")
	}
}
