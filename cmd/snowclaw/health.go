package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealth is `snowclaw health [--url URL] [--live] [--wait]`: GET
// /readyz of a running relay, exit 0 when it answers 200, that is once it
// answers everything it offers, searches included (the relay serves
// NIP-11, REQ and EVENT while its search index loads, but a search then
// answers "loading"). --live asks /healthz instead: the process is up.
// --wait asks again until the answer is 200 or --timeout has passed, for
// a unit or script that must not go on before the relay is ready.
// Container images without curl (the static one) use it as their
// HEALTHCHECK. Without --url it asks the address the configuration
// (file, SNOWCLAW_ADDR, --addr) listens on, on loopback when that is
// every interface.
func runHealth(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "URL to ask (default: http://<addr>/readyz from the configuration, /healthz with --live)")
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
		cfg, err := resolveConfig(&fl, environ)
		if err != nil {
			return err
		}
		path := "/readyz"
		if *live {
			path = "/healthz"
		}
		url = "http://" + loopbackFor(cfg.Addr) + path
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	for {
		err := askHealth(ctx, url)
		if err == nil {
			fmt.Fprintln(stdout, "ok", url)
			return nil
		}
		if !*wait {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still not ready after %s)", err, *timeout)
		case <-time.After(time.Second):
		}
	}
}

// askTimeout bounds one request, whatever --timeout allows in all.
const askTimeout = 5 * time.Second

// askHealth GETs url once: nil for a 200 answer, else an error that says
// what the relay answered instead (how far its search index got).
func askHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
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
	var body struct {
		Status string `json:"status"`
		Search *struct {
			Step    string `json:"step"`
			Done    int64  `json:"done"`
			Percent *int   `json:"percent"`
			Error   string `json:"error"`
		} `json:"search_loading"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body)
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	msg := fmt.Sprintf("health: %s answered %s", url, resp.Status)
	if s := body.Search; s != nil {
		var how []string
		if s.Step != "" {
			how = append(how, s.Step)
		}
		if s.Percent != nil {
			how = append(how, fmt.Sprintf("%d%% done", *s.Percent))
		}
		if s.Error != "" {
			how = append(how, s.Error)
		}
		msg += fmt.Sprintf(": %s, search index %s", body.Status, strings.Join(how, ", "))
	}
	return errors.New(msg)
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
