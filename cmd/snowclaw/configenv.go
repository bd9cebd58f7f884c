package main

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// envPrefix names the environment overrides: SNOWCLAW_ + the TOML path in
// upper case joined by _, e.g. SNOWCLAW_LIMITS_MAX_LIMIT.
const envPrefix = "SNOWCLAW_"

// envNotConfig are SNOWCLAW_* variables that are not config keys: the
// config file's name, and the client commands' key and relay (a shell
// that runs both serve and search may export them).
var envNotConfig = map[string]bool{"SNOWCLAW_CONFIG": true, "SNOWCLAW_SEC": true, "SNOWCLAW_RELAY": true, "SNOWCLAW_TEST_STORE": true}

// kubernetesServiceEnv reports the variables Kubernetes puts into every
// pod for a Service named snowclaw (SNOWCLAW_SERVICE_HOST,
// SNOWCLAW_SERVICE_PORT[_NAME], SNOWCLAW_PORT=tcp://…,
// SNOWCLAW_PORT_3334_TCP…). They say nothing to the relay, and a pod
// cannot keep them out without enableServiceLinks: false. No config key
// begins with service or port (a test keeps it so).
func kubernetesServiceEnv(name string) bool {
	return name == "SNOWCLAW_PORT" || strings.HasPrefix(name, "SNOWCLAW_PORT_") || strings.HasPrefix(name, "SNOWCLAW_SERVICE_")
}

// configFields lists every leaf of the config struct with its TOML path.
// An embedded struct without a tag (LimitsConfig's policies.Limits) lends
// its keys to the table around it, as the TOML decoder reads it.
func configFields(v reflect.Value, prefix string, out map[string]reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			configFields(v.Field(i), prefix, out)
			continue
		}
		if name == "" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration{}) {
			configFields(fv, path, out)
			continue
		}
		out[path] = fv
	}
}

func envName(path string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// ignoredEnv is a SNOWCLAW_* variable that names no setting. It is
// reported, not fatal: a platform may set variables of ours we never
// asked for, and an image that refused to start over one would be worse
// than a warning naming it.
type ignoredEnv struct{ Name string }

func (w ignoredEnv) String() string {
	return w.Name + " is not a setting and is ignored (see config.example.toml)"
}

// loadEnv overlays SNOWCLAW_* variables from environ on cfg. An empty
// value is the variable unset, whatever the setting's type: `FOO=` in a
// compose file or a template that expanded to nothing leaves the file's
// or the default value in force. A variable that names no setting is
// returned in ignored (once), not applied.
//
// It is written here rather than taken from an env library: none is in
// go.mod, and those we know of want an `env:"…"` tag on every field, a
// second name per setting to keep in step with its toml tag. Here the
// names come from the toml tags, so every key of the file has exactly
// one variable (TestConfig_EnvCoversEveryKey), and the rules above —
// empty is unset, an unknown name is reported, Kubernetes' service
// variables pass silently — are ones those libraries do not have.
func loadEnv(cfg *Config, environ []string) (ignored []ignoredEnv, err error) {
	fields := make(map[string]reflect.Value)
	configFields(reflect.ValueOf(cfg).Elem(), "", fields)
	byEnv := make(map[string]string, len(fields))
	for path := range fields {
		byEnv[envName(path)] = path
	}
	var errs []error
	seen := map[string]bool{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) || envNotConfig[name] {
			continue
		}
		path, known := byEnv[name]
		if !known {
			if !kubernetesServiceEnv(name) && !seen[name] {
				seen[name] = true
				ignored = append(ignored, ignoredEnv{Name: name})
			}
			continue
		}
		if strings.TrimSpace(val) == "" {
			continue
		}
		if err := setField(fields[path], val); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return ignored, errors.Join(errs...)
}

func setField(f reflect.Value, s string) error {
	if u, ok := f.Addr().Interface().(interface{ UnmarshalText([]byte) error }); ok {
		return u.UnmarshalText([]byte(s))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		f.SetInt(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		f.SetFloat(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		f.SetBool(b)
	case reflect.Map:
		m, err := parseWeights(s)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(m))
	case reflect.Slice:
		var items []string
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported config type %s", f.Kind())
	}
	return nil
}
