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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	once.Do(func() { srv, startErr = start() })
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
func start() (*server, error) {
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
		s, err := run(bin, dir, data, cred)
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

func run(bin, dir, data string, cred *syscall.Credential) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "unix_socket_directories="+dir,
		// tests throw the data away: durability is not needed, speed is
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=300",
		"-c", "dynamic_shared_memory_type=mmap")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s := &server{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.url("postgres"))
		cancel()
		if err == nil {
			_ = c.Close(context.Background())
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("pgtest: postgres exited at start:\n%s", log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-s.done
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("pgtest: postgres did not accept connections within a minute: %v\n%s", err, log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
