package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one relay process under test.
type proc struct {
	name    string
	cmd     *exec.Cmd
	url     string
	began   time.Time
	waited  chan error
	logPath string
}

// startProc runs bin with args and env (on top of this process's
// environment minus every SNOWCLAW_* variable, which serve would refuse
// or obey) and waits for the line "… listening on ws://host:port" on its
// stdout. The relay's stderr goes to logPath.
func startProc(ctx context.Context, name, bin string, args, env []string, logPath string, timeout time.Duration) (*proc, error) {
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SNOWCLAW_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, began: time.Now(), waited: make(chan error, 1), logPath: logPath}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "listening on "); ok {
				select {
				case urls <- strings.TrimSpace(u):
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		p.waited <- cmd.Wait()
		logf.Close()
	}()
	select {
	case p.url = <-urls:
		return p, nil
	case err := <-p.waited:
		p.waited <- err
		return nil, fmt.Errorf("%s exited before listening (%v); see %s", name, err, logPath)
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	p.stop()
	return nil, fmt.Errorf("%s not listening after %s; see %s", name, timeout, logPath)
}

// stop asks the relay to shut down (SIGTERM) and kills it if it has not
// exited within a minute.
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.waited:
		p.waited <- err
		return err
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("%s ignored SIGTERM for a minute; killed", p.name)
	}
}

// cpu is the relay's user+system CPU time so far (/proc/<pid>/stat, in
// clock ticks of 10 ms).
func (p *proc) cpu() (time.Duration, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3; utime and stime are fields 14 and 15
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * (time.Second / 100), nil
}

// rss is the relay's peak (VmHWM) and current (VmRSS) resident set, bytes.
func (p *proc) rss() (peak, now int64, err error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmHWM":
			peak = kb << 10
		case "VmRSS":
			now = kb << 10
		}
	}
	return peak, now, nil
}

// snowclawEnv is the serve configuration of a benchmark: search and the
// agent on (no model: it keeps memory and context), every rate limit off.
func snowclawEnv() []string {
	return []string{
		"SNOWCLAW_LOG_LEVEL=warn",
		"SNOWCLAW_SEARCH_ENABLED=true",
		"SNOWCLAW_AGENT_ENABLED=true",
		"SNOWCLAW_RATE_LIMITS_EVENTS_PER_SECOND_IP=0",
		"SNOWCLAW_RATE_LIMITS_EVENTS_PER_SECOND_PUBKEY=0",
		"SNOWCLAW_RATE_LIMITS_QUERIES_PER_SECOND_IP=0",
		"SNOWCLAW_RATE_LIMITS_CONNECTIONS_PER_SECOND_IP=0",
	}
}

// buildSnowclaw compiles cmd/snowclaw into dir unless bin names one.
func buildSnowclaw(ctx context.Context, bin, dir string, stderr io.Writer) (string, error) {
	if bin != "" {
		return bin, nil
	}
	out := filepath.Join(dir, "snowclaw")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/snowclaw/snowclaw/cmd/snowclaw")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building snowclaw (or pass --snowclaw): %w", err)
	}
	return out, nil
}
