// Command image builds olmsync's container image without Docker (internal/ociimage): `make
// image` runs it. It writes an OCI layout and a tarball per platform into --out and prints
// each image's digest and size.
//
//	go run ./hack/image --version v0.1.0 --revision $(git rev-parse HEAD) --out bin/image
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/olmsync/olmsync/internal/ociimage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		platforms = flag.String("platforms", "linux/amd64", "comma-separated os/arch pairs to build for")
		version   = flag.String("version", "devel", "the version stamped into the binary and the labels")
		revision  = flag.String("revision", "", "the commit the image is built from")
		source    = flag.String("source", "https://github.com/olmsync/olmsync", "the source repository (org.opencontainers.image.source)")
		repo      = flag.String("repository", "ghcr.io/olmsync/olmsync", "the repository the tarball names the image in (tagged with the version)")
		out       = flag.String("out", "bin/image", "the folder receiving the OCI layout and the tarballs")
	)
	flag.Parse()
	epoch, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	var ps []v1.Platform
	for _, s := range strings.Split(*platforms, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		ps = append(ps, *p)
	}
	tag, err := name.NewTag(*repo + ":" + strings.ReplaceAll(*version, "+", "_"))
	if err != nil {
		return err
	}
	images, err := ociimage.Build(context.Background(), ociimage.Options{
		Dir: ".", Package: "./cmd/olmsync", Platforms: ps,
		Version: *version, Revision: *revision, Source: *source, Epoch: epoch,
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	w, err := ociimage.Write(images, tag, *out)
	if err != nil {
		return err
	}
	fmt.Printf("OCI layout: %s (%s)\n", w.Layout, tag)
	for p, d := range w.Digests {
		fmt.Printf("%s: %s, %.1f MiB compressed, tarball %s\n", p, d, float64(w.Sizes[p])/(1<<20), w.Tarballs[p])
	}
	return nil
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (reproducible-builds.org), 0 when unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
