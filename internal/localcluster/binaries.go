package localcluster

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
)

// binaries are the programs a control plane needs, in the folder FindBinaries returns.
var binaries = []string{"kube-apiserver", "etcd"}

// executable returns the path of the running program; a variable so that tests control
// where "k8s next to the executable" is.
var executable = os.Executable

// BinariesNotFoundError says kube-apiserver and etcd were found in none of the places
// FindBinaries (or Options.BinaryDir) names.
type BinariesNotFoundError struct {
	// Searched lists the folders looked in, in order.
	Searched []string
}

func (e *BinariesNotFoundError) Error() string {
	return fmt.Sprintf("kube-apiserver and etcd not found: run `make envtest` in olmsync's repository to build them, or set KUBEBUILDER_ASSETS to a folder holding them (looked in %s)",
		strings.Join(e.Searched, ", "))
}

// FindBinaries returns the folder holding kube-apiserver and etcd. It looks, in order, in
// $KUBEBUILDER_ASSETS; in k8s next to the running executable (bin/olmsync finds the
// bin/k8s link `make envtest` makes); in ./bin/k8s; and in the cache folder `make envtest`
// builds into, ($XDG_CACHE_HOME or ~/.cache)/olmsync/envtest/kube-<v>-etcd-<v>, taking the
// highest Kubernetes version there. A folder counts only when it holds both programs, so
// a half-finished build is passed over. When none does it returns a
// *BinariesNotFoundError listing where it looked.
func FindBinaries() (string, error) {
	var searched []string
	try := func(dir string) bool {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		searched = append(searched, dir)
		return hasBinaries(dir)
	}
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" && try(dir) {
		return filepath.Abs(dir)
	}
	if exe, err := executable(); err == nil {
		// Follow a symlinked install (~/go/bin/olmsync → repo/bin/olmsync) back to the
		// folder the build put it in, where bin/k8s is.
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if dir := filepath.Join(filepath.Dir(exe), "k8s"); try(dir) {
			return filepath.Abs(dir)
		}
	}
	if dir := filepath.Join("bin", "k8s"); try(dir) {
		return filepath.Abs(dir)
	}
	if cache := cacheDir(); cache != "" {
		pattern := filepath.Join(cache, "olmsync", "envtest", "kube-*-etcd-*")
		searched = append(searched, pattern)
		if dir := newestBuild(pattern); dir != "" {
			return dir, nil
		}
	}
	return "", &BinariesNotFoundError{Searched: searched}
}

// cacheDir is the Makefile's cache root: $XDG_CACHE_HOME, else ~/.cache. Not
// os.UserCacheDir, which is elsewhere on macOS and would miss what `make envtest` built.
func cacheDir() string {
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return dir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache")
	}
	return ""
}

// newestBuild returns the folder matching pattern (kube-<v>-etcd-<v>) that holds both
// programs and has the highest Kubernetes version, then etcd version; "" when none does.
func newestBuild(pattern string) string {
	dirs, _ := filepath.Glob(pattern)
	type build struct {
		dir        string
		kube, etcd semver.Version
	}
	var builds []build
	for _, dir := range dirs {
		kube, etcd, ok := strings.Cut(strings.TrimPrefix(filepath.Base(dir), "kube-"), "-etcd-")
		if !ok || !hasBinaries(dir) {
			continue
		}
		kv, err1 := semver.ParseTolerant(kube)
		ev, err2 := semver.ParseTolerant(etcd)
		if err1 != nil || err2 != nil {
			continue
		}
		builds = append(builds, build{dir, kv, ev})
	}
	if len(builds) == 0 {
		return ""
	}
	return slices.MaxFunc(builds, func(a, b build) int {
		return cmp.Or(a.kube.Compare(b.kube), a.etcd.Compare(b.etcd))
	}).dir
}

// hasBinaries says whether dir holds both programs as executable files.
func hasBinaries(dir string) bool {
	for _, name := range binaries {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}
