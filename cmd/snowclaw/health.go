package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// runHealth is `snowclaw health [--url URL]`: GET /healthz of a running
// relay, exit 0 when it answers 200. Container images without curl (the
// static one) use it as their HEALTHCHECK. Without --url it asks the
// address the configuration (file, SNOWCLAW_ADDR, --addr) listens on, on
// loopback when that is every interface.
func runHealth(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "health URL (default: http://<addr>/healthz from the configuration)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	var fl serveFlags
	fs.StringVar(&fl.addr, "addr", "", "the relay's listen address (default from the configuration)")
	fs.StringVar(&fl.config, "config", "", "TOML config file")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: snowclaw health [--url URL] [--addr HOST:PORT] [--config FILE] [--timeout D]")
		return errUsageShown
	}
	url := *target
	if url == "" {
		cfg, ignored, err := resolveConfig(&fl, environ)
		if err != nil {
			return err
		}
		warnIgnoredEnv(stderr, ignored)
		url = "http://" + loopbackFor(cfg.Addr) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
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
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s", url, resp.Status)
	}
	fmt.Fprintln(stdout, "ok", url)
	return nil
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
