package sources

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/net/proxy"
)

// go-git's ssh transport dials with a background context and then runs the
// ssh handshake with no deadline at all, so a server that accepts the
// connection and never speaks would hold a fetch forever, whatever its
// context says. Its one hook into dialing is a proxy URL. So an ssh fetch
// names a proxy of our own scheme; its dialer dials as go-git would have
// (through any proxy the environment names) and closes the connection when
// the fetch's context ends, which unblocks the handshake and any read.

// sshDialScheme is the proxy scheme registered for this.
const sshDialScheme = "olmsync-ssh-context"

var (
	registerSSHDialer sync.Once
	sshFetchContexts  sync.Map // id → context.Context of a fetch in flight
	sshFetchID        atomic.Uint64
)

// sshContextProxy returns the proxy options that bind an ssh fetch's
// connections to ctx, and a func to call once the fetch is over.
func sshContextProxy(ctx context.Context) (transport.ProxyOptions, func()) {
	registerSSHDialer.Do(func() {
		proxy.RegisterDialerType(sshDialScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
			return &contextDialer{id: u.Host}, nil
		})
	})
	id := strconv.FormatUint(sshFetchID.Add(1), 10)
	sshFetchContexts.Store(id, ctx)
	return transport.ProxyOptions{URL: sshDialScheme + "://" + id}, func() { sshFetchContexts.Delete(id) }
}

// contextDialer dials for the fetch it names.
type contextDialer struct{ id string }

func (d *contextDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

// DialContext dials addr within both go-git's ctx and the fetch's, and ties
// the connection's life to the fetch's context.
func (d *contextDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	v, ok := sshFetchContexts.Load(d.id)
	if !ok {
		return nil, fmt.Errorf("ssh dial to %s: the fetch is over", addr)
	}
	fetchCtx := v.(context.Context)
	dialCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopDial := context.AfterFunc(fetchCtx, cancel)
	defer stopDial()
	conn, err := proxy.Dial(dialCtx, network, addr)
	if err != nil {
		return nil, err
	}
	return &contextConn{Conn: conn, stop: context.AfterFunc(fetchCtx, func() { _ = conn.Close() })}, nil
}

// contextConn is a connection closed when its fetch's context ends.
type contextConn struct {
	net.Conn
	stop func() bool
}

func (c *contextConn) Close() error {
	c.stop()
	return c.Conn.Close()
}
