package olmtest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/olmsync/olmsync/internal/testenv"
)

// Endpoint is an HTTPS server on this host standing for the pods behind a Service: the API
// server calls it through an EndpointSlice of the Service (testenv starts kube-apiserver
// with --enable-aggregator-routing, so it routes to endpoints rather than to the Service's
// cluster IP, which nothing routes here). The API server refuses an EndpointSlice address in
// the loopback range ("may not be in the loopback range (127.0.0.0/8, ::1/128)"), so the
// server listens on the host's own address of its first interface that is up and not
// loopback: the kube-apiserver of envtest, on the same host, reaches it all the same. It
// serves with the certificate of a Secret (tls.crt, tls.key), read again at every TLS
// handshake, as an operator reads the files OLM mounts: a rotated certificate is served
// from the next connection on.
type Endpoint struct {
	// Address and Port are where it listens.
	Address string
	Port    int32
	// Requests counts the requests it served.
	Requests atomic.Int64
}

// ServeBehindService starts an Endpoint serving handler with the certificate of the Secret
// secretName, once the Service exists, and an EndpointSlice of the Service pointing each of
// its ports at it. Both stop when the test ends.
func ServeBehindService(tb testing.TB, env *testenv.Env, namespace, service, secretName string, handler http.Handler) *Endpoint {
	tb.Helper()
	ctx := context.Background()
	ip, family := hostAddress(tb)
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		tb.Fatal(err)
	}
	e := &Endpoint{Address: ip.String(), Port: int32(l.Addr().(*net.TCPAddr).Port)}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.Requests.Add(1)
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				secret := &corev1.Secret{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret); err != nil {
					return nil, err
				}
				cert, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
				return &cert, err
			},
		},
		// A handshake the API server gives up on (a certificate it does not trust yet) is
		// what some tests wait through: not worth a line each.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	tb.Cleanup(func() { _ = srv.Close() })

	svc := &corev1.Service{}
	Eventually(tb, "service "+namespace+"/"+service, func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: service}, svc)
	})
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, GenerateName: service + "-",
			Labels: map[string]string{discoveryv1.LabelServiceName: service},
		},
		AddressType: family,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{e.Address}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	for _, p := range svc.Spec.Ports {
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(e.Port), Protocol: ptr.To(corev1.ProtocolTCP)})
	}
	if err := env.Client.Create(ctx, slice); err != nil {
		tb.Fatalf("create endpointslice of service %s/%s: %v", namespace, service, err)
	}
	tb.Cleanup(func() { _ = env.Client.Delete(context.Background(), slice) })
	return e
}

// hostAddress is the first address of an interface that is up and not loopback, IPv4
// first, that an EndpointSlice may name (global unicast). Without one the test is skipped,
// or fails under CI.
func hostAddress(tb testing.TB) (net.IP, discoveryv1.AddressType) {
	tb.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		tb.Fatal(err)
	}
	var v6 net.IP
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || !n.IP.IsGlobalUnicast() {
				continue
			}
			if v4 := n.IP.To4(); v4 != nil {
				return v4, discoveryv1.AddressTypeIPv4
			}
			if v6 == nil {
				v6 = n.IP
			}
		}
	}
	if v6 != nil {
		return v6, discoveryv1.AddressTypeIPv6
	}
	msg := "no network interface but loopback: the API server refuses an EndpointSlice to a loopback address"
	if os.Getenv("CI") == "" {
		tb.Skip(msg)
	}
	tb.Fatal(msg)
	return nil, ""
}

// AdmissionHandler answers AdmissionReview v1 requests: refuse, given the request, returns
// why the object is refused ("" to allow it).
func AdmissionHandler(refuse func(*admissionv1.AdmissionRequest) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		review := &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", errors.Join(err, errors.New("no request"))), http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if why := refuse(review.Request); why != "" {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Message: why, Code: http.StatusForbidden}
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
}
