// Package pgtest starts a real PostgreSQL server for a package's tests:
// one throwaway cluster per test binary (initdb into a temporary
// directory, listening on 127.0.0.1 on a free port), and a fresh database
// per test, so tests never see each other's rows. It is test support
// only: nothing outside _test.go files imports it.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//	...
//	url := pgtest.New(t) // postgres://postgres@127.0.0.1:PORT/t_3_ab12?sslmode=disable
//
// When the PostgreSQL binaries are missing the test is skipped with a
// message naming Debian's package, except under CI (CI set), where a
// skip would hide that nothing ran: there it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// ErrNoPostgres: initdb or postgres is not installed.
var ErrNoPostgres = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found; install Debian's postgresql package (apt-get install postgresql)")

var (
	once     sync.Once
	srv      *server
	startErr error
	dbSeq    atomic.Int64
	drops    sync.WaitGroup // databases being dropped
)

// server is the running cluster.
type server struct {
	dir  string // the temporary directory holding data, socket and log
	data string
	bin  string
	cred *syscall.Credential
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the postgres process has exited
}

// Main runs the package's tests and stops the cluster afterwards (if a
// test started it). Use it as TestMain's body: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// New returns the URL of a new, empty database on the package's cluster,
// starting the cluster on first use. The database is dropped when t ends.
func New(t testing.TB) string {
	t.Helper()
	once.Do(func() { srv, startErr = start(false) })
	if startErr != nil {
		if errors.Is(startErr, ErrNoPostgres) && !inCI() {
			t.Skip(startErr.Error())
		}
		t.Fatal(startErr)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("t_%d_%s", dbSeq.Add(1), hex.EncodeToString(b[:]))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, srv.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connecting to the test cluster: %v", err)
	}
	defer admin.Close(context.Background())
	// FILE_COPY: with fsync off its checkpoint is cheap, and copying the
	// template's files beats writing them all to the WAL (the default)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" STRATEGY FILE_COPY"); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	adminURL := srv.url("postgres")
	t.Cleanup(func() {
		// dropped behind the test's back: only disk space depends on it
		drops.Add(1)
		go func() {
			defer drops.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if c, err := pgx.Connect(ctx, adminURL); err == nil {
				_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
				_ = c.Close(ctx)
			}
		}()
	})
	return srv.url(name)
}

// Stop shuts the cluster down and removes its files; New starts no new
// one afterwards.
func Stop() {
	once.Do(func() { startErr = errors.New("pgtest: stopped") })
	if srv == nil {
		return
	}
	drops.Wait()
	// SIGQUIT is PostgreSQL's immediate shutdown: the data is thrown away
	_ = srv.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-srv.done:
	case <-time.After(10 * time.Second):
		_ = srv.cmd.Process.Kill()
		<-srv.done
	}
	_ = os.RemoveAll(srv.dir)
	srv = nil
}

func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// binDir finds the directory holding initdb and postgres: PATH first,
// then Debian's versioned directories, newest first.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", ErrNoPostgres
}

// start makes and starts the cluster. PostgreSQL refuses to run as root,
// so under root the processes get the postgres user's credentials (the
// same as runuser -u postgres, without depending on runuser). The server
// is started directly, not through pg_ctl, as a child that the kernel
// kills when the test binary dies (Pdeathsig): a test run cut short
// leaves no server behind.
func start(durable bool) (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	var lastErr error
	for range 3 { // a free port can be taken between finding and binding it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := run(bin, dir, data, cred, port, durable)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	_ = os.RemoveAll(dir)
	return nil, lastErr
}

// credential is who runs PostgreSQL: nil (this process's user) unless
// that is root, then the postgres user, who gets dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w (running as root, and there is no postgres user to run it as)", ErrNoPostgres)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func run(bin, dir, data string, cred *syscall.Credential, port int, durable bool) (*server, error) {
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	// tests throw the data away: durability is not needed, speed is;
	// except a test that kills the server and counts what survived,
	// which needs a commit to mean what it means in production (fsync
	// may stay off: the kernel keeps what a killed process wrote)
	commit := "off"
	if durable {
		commit = "on"
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit="+commit, "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=300",
		"-c", "dynamic_shared_memory_type=mmap")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s := &server{dir: dir, data: data, bin: bin, cred: cred, port: port, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	exited := false
	testwait.Until(60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var c *pgx.Conn
		c, err = pgx.Connect(ctx, s.url("postgres"))
		cancel()
		if err == nil {
			_ = c.Close(context.Background())
			return true
		}
		select {
		case <-s.done:
			exited = true
		default:
		}
		return exited
	})
	switch {
	case exited:
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("pgtest: postgres exited at start:\n%s", log)
	case err != nil:
		_ = cmd.Process.Kill()
		<-s.done
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("pgtest: postgres did not accept connections within a minute: %v\n%s", err, log)
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Server is a cluster of one test's own, which it may kill and start
// again (the package's shared cluster must not die under other tests).
// Its commits are synchronous: what a client was told is committed
// survives a kill.
type Server struct {
	t   testing.TB
	srv *server
}

// NewServer starts a cluster for t alone; it is removed when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s, err := start(true)
	if errors.Is(err, ErrNoPostgres) && !inCI() {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	ts := &Server{t: t, srv: s}
	t.Cleanup(func() {
		ts.Kill()
		_ = os.RemoveAll(s.dir)
	})
	return ts
}

// URL is the address of the database db (postgres always exists).
func (s *Server) URL(db string) string { return s.srv.url(db) }

// Kill ends the server at once, every process of it (SIGKILL), as a
// crash would: nothing is flushed, no client is told.
func (s *Server) Kill() {
	if s.srv.cmd == nil {
		return
	}
	// every backend sits in a session of its own (setsid): each is
	// killed by its pid, before the postmaster can tell them to quit
	pm := s.srv.cmd.Process.Pid
	children := childrenOf(pm)
	for _, pid := range children {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(pm, syscall.SIGKILL)
	<-s.srv.done
	// a child still attached to the shared memory would stop the restart
	for _, pid := range children {
		testwait.Until(10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil })
	}
	s.srv.cmd = nil
}

// childrenOf lists the processes whose parent is pid (/proc).
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		st := string(raw)
		i := strings.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(st[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// Start starts a killed server again on the same data and port; it
// recovers from its WAL first.
func (s *Server) Start() {
	s.t.Helper()
	started, err := run(s.srv.bin, s.srv.dir, s.srv.data, s.srv.cred, s.srv.port, true)
	if err != nil {
		s.t.Fatal(err)
	}
	s.srv.cmd, s.srv.done = started.cmd, started.done
}
