package ocitest

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// Registry is an OCI registry served over HTTPS on loopback for one test.
type Registry struct {
	// Host is host:port, to put in image references.
	Host string
	srv  *httptest.Server

	mu      sync.Mutex
	private map[string]authn.Basic // repository prefix → its credentials
	corrupt map[string]bool        // blob digests served with their bytes flipped
	// blobGets counts the blob downloads (GET .../blobs/...): what was pulled.
	blobGets atomic.Int64
	// unauthorized counts requests refused for missing or wrong credentials.
	unauthorized atomic.Int64
}

// Serve starts a registry for the test; it stops when the test ends.
func Serve(tb testing.TB) *Registry {
	tb.Helper()
	r := &Registry{private: map[string]authn.Basic{}, corrupt: map[string]bool{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.serve(w, req, inner)
	}))
	tb.Cleanup(r.srv.Close)
	r.Host = strings.TrimPrefix(r.srv.URL, "https://")
	return r
}

// Close stops the registry now, as a registry going away would.
func (r *Registry) Close() { r.srv.Close() }

// Transport trusts the registry's certificate: give it to the code under test
// (catalog.ImageOptions.Transport).
func (r *Registry) Transport() http.RoundTripper { return r.srv.Client().Transport }

// Private puts the repositories whose names start with prefix behind basic auth with
// these credentials.
func (r *Registry) Private(prefix, username, password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.private[prefix] = authn.Basic{Username: username, Password: password}
}

// Corrupt makes the registry serve the blob of this digest with its bytes flipped (a
// storage fault, or someone in the middle): what a client reads no longer matches.
func (r *Registry) Corrupt(digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.corrupt[digest] = true
}

// BlobGets is how many blobs the registry served: a pull that a cache spared does not count.
func (r *Registry) BlobGets() int64 { return r.blobGets.Load() }

// Unauthorized is how many requests it refused for want of credentials.
func (r *Registry) Unauthorized() int64 { return r.unauthorized.Load() }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request, inner http.Handler) {
	repo := strings.TrimPrefix(req.URL.Path, "/v2/")
	r.mu.Lock()
	var want *authn.Basic
	anyPrivate := len(r.private) > 0
	for prefix, creds := range r.private {
		if strings.HasPrefix(repo, prefix) {
			want = &creds
		}
	}
	r.mu.Unlock()
	// With a private repository, the registry asks for basic auth at /v2/ as registries
	// do; clients without credentials for a repository then go on anonymously.
	if anyPrivate && (req.URL.Path == "/v2/" || want != nil) {
		user, pass, ok := req.BasicAuth()
		if want != nil && (!ok || user != want.Username || pass != want.Password) || want == nil && !ok {
			r.unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
	}
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
		r.blobGets.Add(1)
		digest := path.Base(req.URL.Path)
		r.mu.Lock()
		bad := r.corrupt[digest]
		r.mu.Unlock()
		if bad {
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			for i := range body {
				body[i] ^= 0x5a
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
			return
		}
	}
	inner.ServeHTTP(w, req)
}

// Push pushes img as repoTag (repo:tag, or repo alone for an untagged push by digest)
// and returns its reference by digest (host/repo@sha256:…) and the digest.
func (r *Registry) Push(tb testing.TB, repoTag string, img v1.Image) (ref, digest string) {
	tb.Helper()
	d, err := img.Digest()
	if err != nil {
		tb.Fatal(err)
	}
	repo, _, _ := strings.Cut(repoTag, ":")
	target := r.Host + "/" + repoTag
	if !strings.Contains(repoTag, ":") {
		target = r.Host + "/" + repo + "@" + d.String()
	}
	parsed, err := name.ParseReference(target)
	if err != nil {
		tb.Fatal(err)
	}
	auth := authn.Anonymous
	r.mu.Lock()
	for prefix, creds := range r.private {
		if strings.HasPrefix(repo, prefix) {
			auth = authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: creds.Password})
		}
	}
	r.mu.Unlock()
	if err := remote.Write(parsed, img, remote.WithTransport(r.Transport()), remote.WithAuth(auth)); err != nil {
		tb.Fatalf("push %s: %v", target, err)
	}
	return r.Host + "/" + repo + "@" + d.String(), d.String()
}

// DockerConfigJSON is a .dockerconfigjson granting these credentials for this registry,
// as `kubectl create secret docker-registry` writes it.
func (r *Registry) DockerConfigJSON(username, password string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(username + ":" + password))
	return fmt.Appendf(nil, `{"auths":{%q:{"username":%q,"password":%q,"auth":%q}}}`, r.Host, username, password, auth)
}

// Files is an image of one layer holding these files (path → content), with labels.
func Files(tb testing.TB, files map[string][]byte, labels map[string]string) v1.Image {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	dirs := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	slices.Sort(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
			tb.Fatal(err)
		}
	}
	for _, p := range paths {
		data := files[p]
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		tb.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		tb.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Labels: labels})
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// BundleImage is the image opm builds of a bundle folder: its manifests/ and metadata/
// at the image root, and the annotations of metadata/annotations.yaml as labels. edit,
// when given, may change the files (path → content) first, to make a broken bundle.
func BundleImage(tb testing.TB, dir string, edit func(files map[string][]byte)) v1.Image {
	tb.Helper()
	files := map[string][]byte{}
	for _, folder := range []string{"manifests", "metadata"} {
		root := filepath.Join(dir, folder)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = data
			return nil
		})
		if err != nil {
			tb.Fatalf("bundle folder %s: %v", dir, err)
		}
	}
	if edit != nil {
		edit(files)
	}
	var doc struct {
		Annotations map[string]any `json:"annotations"`
	}
	if err := yaml.Unmarshal(files["metadata/annotations.yaml"], &doc); err != nil {
		tb.Fatalf("bundle folder %s: annotations: %v", dir, err)
	}
	labels := map[string]string{}
	for k, v := range doc.Annotations {
		labels[k] = fmt.Sprint(v)
	}
	return Files(tb, files, labels)
}

// LayerDigest is the digest of the image's only (or last) layer.
func LayerDigest(tb testing.TB, img v1.Image) string {
	tb.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) == 0 {
		tb.Fatalf("layers: %v", err)
	}
	d, err := layers[len(layers)-1].Digest()
	if err != nil {
		tb.Fatal(err)
	}
	return d.String()
}
