package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/olmsync/olmsync/internal/ocitest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/olm/catalog"
)

func bundleDir(tb testing.TB, rel string) string {
	tb.Helper()
	return shareddata.Path(tb, filepath.Join("data", "catalogs", "community-operators-bundles", "operators", rel))
}

// TestLoadBundleImage: the real etcd 0.9.4 bundle, built into an image, is read back from
// the registry as the folder reads: its CSV, its three CRDs, the properties opm derives.
// A second load reads the cache; the cache never serves a caller who may not pull the image.
func TestLoadBundleImage(t *testing.T) {
	ctx := context.Background()
	reg := ocitest.Serve(t)
	reg.Private("private/", "olm", "s3cret-pass")
	dir := bundleDir(t, "etcd/0.9.4")
	img := ocitest.BundleImage(t, dir, nil)
	ref, digest := reg.Push(t, "bundles/etcd:0.9.4", img)
	privateRef, _ := reg.Push(t, "private/etcd:0.9.4", img)
	cache, err := catalog.OpenImageCache(t.TempDir(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	opts := catalog.ImageOptions{Cache: cache, Transport: reg.Transport(), Keychain: authn.NewMultiKeychain()}

	u, err := catalog.LoadBundleImage(ctx, ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := catalog.LoadBundleDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Source.Digest != digest || u.Source.Cached || u.Source.Format != catalog.FormatBundleImage {
		t.Errorf("source %+v, want %s pulled", u.Source, digest)
	}
	b := u.Bundle
	if b.Name != "etcdoperator.v0.9.4" || b.Package != "etcd" || b.CSV == nil || len(b.Objects) != 3 || b.Image != ref {
		t.Fatalf("bundle %s of %s, csv %v, %d objects, image %s", b.Name, b.Package, b.CSV != nil, len(b.Objects), b.Image)
	}
	if len(b.Properties) != len(fromDir.Bundle.Properties) || u.Annotations.Package != "etcd" || len(u.Problems.Errors()) != 0 {
		t.Errorf("image: %d properties, annotations %+v, problems %v; the folder gives %d properties",
			len(b.Properties), u.Annotations, u.Problems, len(fromDir.Bundle.Properties))
	}
	if b.Objects[0].Origin.File != "manifests/etcdbackups.etcd.database.coreos.com.crd.yaml" {
		t.Errorf("origin %s: want the file in the image", b.Objects[0].Origin)
	}

	pulled := reg.BlobGets()
	again, err := catalog.LoadBundleImage(ctx, ref, opts)
	if err != nil || !again.Source.Cached || reg.BlobGets() != pulled {
		t.Errorf("second load: cached %v, %d blobs pulled, err %v; want it read from the cache", again.Source.Cached, reg.BlobGets()-pulled, err)
	}

	// The private repository holds the same digest, now in the cache: without credentials
	// it is still refused, with them it is served from the cache.
	_, err = catalog.LoadBundleImage(ctx, privateRef, opts)
	var imgErr *catalog.ImageError
	if !errors.As(err, &imgErr) || imgErr.Op != "pull" || catalog.IsPermanent(err) || !strings.Contains(err.Error(), "UNAUTHORIZED") {
		t.Errorf("private image without credentials: %v; want a pull error that may pass later", err)
	}
	withCreds := opts
	withCreds.Keychain = staticKeychain{host: reg.Host, auth: authn.AuthConfig{Username: "olm", Password: "s3cret-pass"}}
	p, err := catalog.LoadBundleImage(ctx, privateRef, withCreds)
	if err != nil || !p.Source.Cached || p.Bundle.Name != "etcdoperator.v0.9.4" {
		t.Errorf("private image with credentials: %+v, %v", p, err)
	}
}

type staticKeychain struct {
	host string
	auth authn.AuthConfig
}

func (k staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == k.host {
		return authn.FromConfig(k.auth), nil
	}
	return authn.Anonymous, nil
}

// TestBundleImageErrors: what cannot be installed is a *BundleError or a permanent
// extraction error, each saying what is wrong; what may pass later (an image not pushed
// yet) is not permanent.
func TestBundleImageErrors(t *testing.T) {
	ctx := context.Background()
	reg := ocitest.Serve(t)
	opts := catalog.ImageOptions{Transport: reg.Transport(), Keychain: authn.NewMultiKeychain()}
	dir := bundleDir(t, "etcd/0.9.4")
	csvFile := "manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml"

	tests := []struct {
		name string
		edit func(files map[string][]byte)
		want string
	}{
		{"no annotations", func(f map[string][]byte) { delete(f, "metadata/annotations.yaml") }, "not a bundle"},
		{"no CSV", func(f map[string][]byte) { delete(f, csvFile) }, "bundle must contain exactly one ClusterServiceVersion, found 0"},
		{"two CSVs", func(f map[string][]byte) {
			f["manifests/copy.clusterserviceversion.yaml"] = []byte(strings.Replace(string(f[csvFile]), "name: etcdoperator.v0.9.4", "name: etcdoperator.v0.9.5", 1))
		}, "bundle must contain exactly one ClusterServiceVersion, found 2"},
		{"unsupported kind", func(f map[string][]byte) {
			f["manifests/deploy.yaml"] = []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
		}, "Deployment is not supported type for registryV1 bundle: manifests/deploy.yaml"},
		{"helm media type", func(f map[string][]byte) {
			f["metadata/annotations.yaml"] = []byte(strings.Replace(string(f["metadata/annotations.yaml"]), "registry+v1", "helm", 1))
		}, `bundle media type "helm" is not "registry+v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, _ := reg.Push(t, "broken/"+strings.ToLower(strings.ReplaceAll(tt.name, " ", "-"))+":1", ocitest.BundleImage(t, dir, tt.edit))
			_, err := catalog.LoadBundleImage(ctx, ref, opts)
			var be *catalog.BundleError
			if !errors.As(err, &be) || !catalog.IsPermanent(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want a BundleError containing %q", err, tt.want)
			}
		})
	}

	t.Run("corrupt layer", func(t *testing.T) {
		img := ocitest.BundleImage(t, dir, nil)
		ref, _ := reg.Push(t, "corrupt/etcd:1", img)
		reg.Corrupt(ocitest.LayerDigest(t, img))
		_, err := catalog.LoadBundleImage(ctx, ref, opts)
		var imgErr *catalog.ImageError
		if !errors.As(err, &imgErr) || imgErr.Op != "extract" || !catalog.IsPermanent(err) {
			t.Errorf("error = %v, want a permanent extraction error", err)
		}
	})
	t.Run("missing image", func(t *testing.T) {
		_, err := catalog.LoadBundleImage(ctx, reg.Host+"/bundles/missing:1", opts)
		var imgErr *catalog.ImageError
		if !errors.As(err, &imgErr) || imgErr.Op != "pull" || catalog.IsPermanent(err) || !strings.Contains(err.Error(), "NAME_UNKNOWN") {
			t.Errorf("error = %v, want a pull error that may pass once the image is pushed", err)
		}
	})
}

// TestMatchCatalog: an image is the bundle the catalog says only when its annotations name
// the catalog's package and one of the channels holding it, and its CSV has the bundle's
// name and version.
func TestMatchCatalog(t *testing.T) {
	c, err := catalog.LoadPath(bundleDir(t, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := c.Package("etcd")
	want := pkg.Bundle("etcdoperator.v0.9.4")
	u, err := catalog.LoadBundleDir(bundleDir(t, "etcd/0.9.4"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := catalog.LoadBundleDir(bundleDir(t, "etcd/0.9.2"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(u *catalog.UnpackedBundle)
		bundle *catalog.Bundle
		want   []string
	}{
		{"agrees", nil, want, nil},
		{"another package", func(u *catalog.UnpackedBundle) { u.Annotations.Package = "etcd-fork" },
			want, []string{`annotation operators.operatorframework.io.bundle.package.v1 is "etcd-fork", but the catalog lists this image as a bundle of package "etcd"`}},
		{"other channels", func(u *catalog.UnpackedBundle) { u.Annotations.Channels = []string{"beta", "clusterwide-alpha"} },
			want, []string{`annotation operators.operatorframework.io.bundle.channels.v1 names channels ["beta", "clusterwide-alpha"], but the catalog has etcdoperator.v0.9.4 only in channels ["singlenamespace-alpha"]`}},
		{"another bundle", func(u *catalog.UnpackedBundle) { *u = *other },
			want, []string{
				"the image's ClusterServiceVersion is etcdoperator.v0.9.2, but the catalog lists the image as bundle etcdoperator.v0.9.4",
				"the image's ClusterServiceVersion has version 0.9.2, but the catalog lists bundle etcdoperator.v0.9.4 at version 0.9.4",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := *u
			if tt.edit != nil {
				tt.edit(&cp)
			}
			var got []string
			for _, p := range cp.MatchCatalog(pkg, tt.bundle) {
				if p.Code != catalog.CodeCatalogMismatch || p.Bundle != "etcdoperator.v0.9.4" {
					t.Errorf("problem %+v: want code %s on the catalog's bundle", p, catalog.CodeCatalogMismatch)
				}
				got = append(got, p.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
