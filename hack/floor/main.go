// Command floor is the render floor `make bench` measures `olmsync check` against: it
// renders the kustomization roots it is given with kustomize's krusty — the kustomize
// version olmsync links, its safe defaults (no plugins, no remote bases, files only from
// under the root) — on as many workers as olmsync renders with, and throws the output
// away. It is what any tool that renders a repository's apps pays, run as its own process
// so that its start-up counts too.
//
//	floor REPO ROOTS-FILE
//
// ROOTS-FILE lists the roots, one repository-relative folder per line.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: floor REPO ROOTS-FILE")
		os.Exit(2)
	}
	repo, list := os.Args[1], os.Args[2]
	roots, err := readRoots(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fsys := filesys.MakeFsOnDisk()
	var objects, failed atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
			for root := range work {
				m, err := k.Run(fsys, filepath.Join(repo, root))
				if err != nil {
					failed.Add(1)
					continue
				}
				objects.Add(int64(m.Size()))
			}
		})
	}
	for _, r := range roots {
		work <- r
	}
	close(work)
	wg.Wait()
	fmt.Printf("%d roots, %d objects, %d failed\n", len(roots), objects.Load(), failed.Load())
}

func readRoots(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out, s.Err()
}
