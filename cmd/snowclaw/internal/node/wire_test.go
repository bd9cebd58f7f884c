package node_test

import (
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// The hook lists docs/architecture.md gives are the ones node/wire.go
// builds, in the same order, with every optional part on (search, the
// agent).
func TestWire_OrderIsDocumented(t *testing.T) {
	e := startEnv(t, withSearch, func(o *node.Options) { o.Agent.Enabled = true })
	got := map[string][]string{
		"RejectEvent":      hookNames(e.r.RejectEvent),
		"OnEventSaved":     hookNames(e.r.OnEventSaved),
		"OnEventDeleted":   hookNames(e.r.OnEventDeleted),
		"OnEphemeralEvent": hookNames(e.r.OnEphemeralEvent),
		"RejectFilter":     hookNames(e.r.RejectFilter),
	}
	doc, err := os.ReadFile("../../../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile("(?m)^- `(\\w+)`: (.*)$")
	name := regexp.MustCompile("`([^`]+)`")
	documented := map[string][]string{}
	for _, m := range line.FindAllStringSubmatch(string(doc), -1) {
		if _, ok := got[m[1]]; !ok {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			documented[m[1]] = append(documented[m[1]], n[1])
		}
	}
	for slice, names := range got {
		if !slices.Equal(documented[slice], names) {
			t.Errorf("%s: docs/architecture.md lists\n\t%v\nnode/wire.go builds\n\t%v", slice, documented[slice], names)
		}
	}
}

// hookNames names each function of a hook slice: Type.Method (with its
// package) for a method value, package.Function for a function or a
// closure it returns.
func hookNames[F any](fs []F) []string {
	var out []string
	for _, f := range fs {
		full := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
		full = strings.TrimSuffix(full[strings.LastIndex(full, "/")+1:], "-fm")
		var parts []string
		for _, p := range strings.Split(full, ".") {
			if strings.HasPrefix(p, "func") && len(parts) > 1 {
				break // a closure: named by the function that made it
			}
			parts = append(parts, strings.Trim(p, "(*)"))
		}
		out = append(out, strings.Join(parts, "."))
	}
	return out
}
