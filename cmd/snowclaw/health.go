package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealth is `snowclaw health`: exit 0 when the relay's /readyz (searches
// answered too; /healthz with --live) answers 200, at the configured
// address (on loopback for a wildcard) unless --url; images without curl
// use it as their HEALTHCHECK. --wait asks every second until --timeout.
func runHealth(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "URL to ask (default: http://<addr>/readyz from the configuration)")
	live := fs.Bool("live", false, "ask /healthz (the process is up) instead of /readyz (search ready too)")
	wait := fs.Bool("wait", false, "ask again every second until ready or --timeout")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer (with --wait: for readiness; 0: no limit)")
	var fl serveFlags
	fs.StringVar(&fl.addr, "addr", "", "the relay's listen address (default from the configuration)")
	fs.StringVar(&fl.config, "config", "", "TOML config file")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: snowclaw health [--url URL] [--live] [--wait] [--addr HOST:PORT] [--config FILE] [--timeout D]")
		return errUsageShown
	}
	url := *target
	if url == "" {
		cfg, ignored, err := resolveConfig(&fl, environ)
		if err != nil {
			return err
		}
		warnIgnoredEnv(stderr, ignored)
		url = "http://" + loopbackFor(cfg.Addr) + map[bool]string{false: "/readyz", true: "/healthz"}[*live]
	}
	cancel := context.CancelFunc(func() {})
	if *timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, *timeout)
	}
	defer cancel()
	for {
		err := askHealth(ctx, url)
		if err == nil {
			fmt.Fprintln(stdout, "ok", url)
			return nil
		} else if !*wait {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still not ready after %s)", err, *timeout)
		case <-time.After(time.Second):
		}
	}
}

// askHealth GETs url once: nil on 200, else what the relay answered.
func askHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // one request, whatever --timeout allows
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
	return fmt.Errorf("health: %s answered %s %s", url, resp.Status, strings.Join(strings.Fields(string(body)), " "))
}

// loopbackFor is the address to reach a listener on addr from the same
// host: a wildcard host (0.0.0.0, ::, none) is reached on loopback.
func loopbackFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
