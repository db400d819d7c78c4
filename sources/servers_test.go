package sources

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/olmsync/olmsync/internal/gittest"
)

// sshKey is an ed25519 key pair in the forms the tests need.
type sshKey struct {
	signer ssh.Signer
	pem    []byte
	priv   ed25519.PrivateKey
}

func newSSHKey(t *testing.T) sshKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return sshKey{signer: signer, pem: pem.EncodeToMemory(block), priv: priv}
}

// sshGitServer is an ssh server on loopback that lets one client key in and
// runs the real git-upload-pack for "exec" requests, as sshd does for git.
type sshGitServer struct {
	addr    string // 127.0.0.1:port
	hostKey sshKey
	wg      sync.WaitGroup
}

func newSSHGitServer(t *testing.T, u *gittest.Upstream, client ssh.PublicKey) *sshGitServer {
	t.Helper()
	s := &sshGitServer{hostKey: newSSHKey(t)}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if bytes.Equal(key.Marshal(), client.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("key not authorized")
		},
	}
	cfg.AddHostKey(s.hostKey.signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveConn(conn, cfg, u.Root)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *sshGitServer) serveConn(conn net.Conn, cfg *ssh.ServerConfig, root string) {
	defer func() { _ = conn.Close() }()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		s.serveSession(ch, chReqs, root)
	}
}

// serveSession answers one "exec git-upload-pack '<path>'" request.
func (s *sshGitServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, root string) {
	defer func() { _ = ch.Close() }()
	for req := range reqs {
		if req.Type != "exec" {
			_ = req.Reply(req.Type == "env", nil)
			continue
		}
		if len(req.Payload) < 4 {
			_ = req.Reply(false, nil)
			return
		}
		command := string(req.Payload[4:])
		prog, arg, _ := strings.Cut(command, " ")
		if prog != "git-upload-pack" {
			_ = req.Reply(false, nil)
			return
		}
		_ = req.Reply(true, nil)
		path := filepath.Join(root, filepath.Clean("/"+strings.Trim(arg, `'"`)))
		cmd := exec.Command("git-upload-pack", path)
		cmd.Env = gittest.Env()
		cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
		// A pipe rather than Stdin = ch: Wait would otherwise wait for the
		// client to close its side before the exit status could be sent.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return
		}
		go func() {
			_, _ = io.Copy(stdin, ch)
			_ = stdin.Close()
		}()
		status := 0
		if err := cmd.Run(); err != nil {
			status = 1
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			}
		}
		payload := make([]byte, 4)
		binary.BigEndian.PutUint32(payload, uint32(status))
		_, _ = ch.SendRequest("exit-status", false, payload)
		return
	}
}

func (s *sshGitServer) RepoURL() string { return "ssh://git@" + s.addr + "/project.git" }

// knownHosts is a known_hosts line trusting the server's host key.
func (s *sshGitServer) knownHosts() []byte { return knownHostsLine(s.addr, s.hostKey) }

// knownHostsLine trusts key for the host at addr.
func knownHostsLine(addr string, key sshKey) []byte {
	return []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, key.signer.PublicKey()) + "\n")
}

// serveAgent runs an ssh-agent holding key on a unix socket and returns the
// socket's path.
func serveAgent(t *testing.T, key sshKey) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: key.priv}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = agent.ServeAgent(keyring, conn)
				_ = conn.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return sock
}

// hangingServer accepts connections and requests and never answers, until
// the test ends.
func hangingServer(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv.URL + "/project.git"
}

// silentTCPServer accepts connections and never writes a byte, like a
// tarpit or a wedged load balancer; it returns its address.
func silentTCPServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	_ = ln.Close()
	return "127.0.0.1:" + strconv.Itoa(addr.Port)
}

// sshMarshalWithPassphrase encodes key's private half protected by passphrase.
func sshMarshalWithPassphrase(key sshKey, passphrase string) ([]byte, error) {
	block, err := ssh.MarshalPrivateKeyWithPassphrase(key.priv, "", []byte(passphrase))
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(block), nil
}
