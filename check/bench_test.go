package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
	"github.com/olmsync/olmsync/render/rendertest"
	"github.com/olmsync/olmsync/sources"
)

// The benchmark re-runs its own test binary to measure peak memory (the child's maximum
// resident set size) of one render or one check in a fresh process: a benchmark loop in
// one process only shows allocations.
const (
	benchChildEnv = "OLMSYNC_BENCH_CHILD" // idle, render or check
	benchRepoEnv  = "OLMSYNC_BENCH_REPO"
	benchAppsEnv  = "OLMSYNC_BENCH_APPS" // the floor's app folders, one per line
	// The CLIs the comparison runs; `make bench` installs them and sets these.
	kustomizeEnv = "OLMSYNC_KUSTOMIZE"
	conftestEnv  = "OLMSYNC_CONFTEST"
)

// TestMain runs the benchmark's child processes.
func TestMain(m *testing.M) {
	if what := os.Getenv(benchChildEnv); what != "" {
		live := watchLiveHeap()
		if err := benchChild(what, os.Getenv(benchRepoEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s %d\n", peakLiveLinePrefix, live()/1024)
		// The child's own peak, which getrusage cannot give the parent: Go starts a child
		// with vfork, sharing the parent's memory until exec, so the child's ru_maxrss is
		// at least the parent's peak — the benchmark's, hundreds of MB by then.
		if kb, ok := selfPeakKB(); ok {
			fmt.Printf("%s %d\n", peakLinePrefix, kb)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchChild renders (or checks) the repository at dir once.
func benchChild(what, dir string) error {
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		return err
	}
	switch what {
	case "idle":
		return nil
	case "render":
		_, err = render.Render(context.Background(), tree.FS, tree.Root, render.Options{})
	case "check":
		_, err = Run(context.Background(), tree, Options{})
	case "floor":
		err = krustyFloor(dir, strings.Fields(os.Getenv(benchAppsEnv)))
	default:
		err = fmt.Errorf("unknown benchmark child %q", what)
	}
	return err
}

// BenchmarkCheck renders and checks the generated repository of the issue: 25 clusters of
// a cluster-scope overlay and 11 individual apps each (300 apps, 5,000 objects), found
// through Argo CD Applications, from disk.
//
//   - render: discovery and every kustomize build, in-process (render.Render);
//   - render+policy: the whole check of a revision (Run): render, the policy inputs, every
//     built-in rule over each cluster;
//   - kustomize+conftest: what a team would run without olmsync: the kustomize CLI once
//     per app (as many at once as olmsync builds apps in parallel), then one
//     `conftest test --combine` over all the output with olmsync's own built-in rules and
//     testdata/conftest/main.rego, which builds olmsync's per-cluster policy input from
//     conftest's combined input (the rules look across apps, so conftest must see them all
//     at once). It checks that conftest finds as many violations as olmsync. Skipped
//     unless OLMSYNC_KUSTOMIZE and OLMSYNC_CONFTEST name the CLIs (make bench does).
//
// Each reports peak-RSS-MB: the peak resident memory of one run in a fresh process (for
// kustomize+conftest, the largest of its processes), next to idle-RSS-MB, the test
// binary's own footprint.
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	shape := rendertest.Benchmark
	if err := shape.Write(filesys.MakeFsOnDisk(), dir); err != nil {
		b.Fatal(err)
	}
	tree, err := sources.OpenWorkTree(dir, sources.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	idle, _ := childPeak(b, "idle", dir)
	first, err := Run(context.Background(), tree, Options{})
	if err != nil {
		b.Fatal(err)
	}
	violations := len(first.Violations)

	b.Run("render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := render.Render(context.Background(), tree.FS, tree.Root, render.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Apps) != shape.Apps() || len(res.Failed()) != 0 {
				b.Fatalf("%d apps, %d failed", len(res.Apps), len(res.Failed()))
			}
		}
		b.ReportMetric(float64(shape.Objects()), "objects")
		rss, live := childPeak(b, "render", dir)
		b.ReportMetric(rss, "peak-RSS-MB")
		b.ReportMetric(live, "peak-live-MB")
		b.ReportMetric(idle, "idle-RSS-MB")
	})

	b.Run("render+policy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := Run(context.Background(), tree, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if !res.Complete() || len(res.Violations) != violations || violations == 0 {
				b.Fatalf("problems %v, %d violations", res.Problems, len(res.Violations))
			}
		}
		b.ReportMetric(float64(violations), "violations")
		rss, live := childPeak(b, "check", dir)
		b.ReportMetric(rss, "peak-RSS-MB")
		b.ReportMetric(live, "peak-live-MB")
		b.ReportMetric(idle, "idle-RSS-MB")
	})

	// A pull request that changes one app of 300: the base and the head checked with one
	// render cache (as `olmsync check --base` does), against a plain check of the head.
	// x-plain-check is the ratio of the two, measured in the same iterations (goal:
	// ≤ 1.2).
	b.Run("pr-one-app-changed", func(b *testing.B) {
		files := shape.Files()
		headDir := b.TempDir()
		changedFile := "apps/app00/base/app.yaml"
		if _, ok := files[changedFile]; !ok {
			b.Fatalf("no %s in the generated repository", changedFile)
		}
		files[changedFile] += "---\n" + rendertest.ConfigMap("added-by-the-pr")
		fsys := filesys.MakeFsOnDisk()
		for p, content := range files {
			if err := fsys.MkdirAll(path.Join(headDir, path.Dir(p))); err != nil {
				b.Fatal(err)
			}
			if err := fsys.WriteFile(path.Join(headDir, p), []byte(content)); err != nil {
				b.Fatal(err)
			}
		}
		head, err := sources.OpenWorkTree(headDir, sources.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		var pr, plain time.Duration
		for b.Loop() {
			start := time.Now()
			opts := Options{Render: render.Options{Cache: render.NewCache()}, PolicyCache: policy.NewFindingsCache()}
			if _, err := Run(context.Background(), tree, opts); err != nil {
				b.Fatal(err)
			}
			if _, err := Run(context.Background(), head, opts); err != nil {
				b.Fatal(err)
			}
			pr += time.Since(start)
			b.StopTimer()
			start = time.Now()
			if _, err := Run(context.Background(), head, Options{}); err != nil {
				b.Fatal(err)
			}
			plain += time.Since(start)
			b.StartTimer()
		}
		b.ReportMetric(float64(pr)/float64(plain), "x-plain-check")
	})

	// The floor of issue 18: krusty alone building every app's folder, GOMAXPROCS at once,
	// from disk — no discovery, no policy input, no rules, no report. x-floor-time is the
	// whole check's time over the floor's, measured in the same iterations (goal: ≤ 1.25),
	// and x-floor-memory the peak memory of one check over one floor, each in a fresh
	// process (goal: ≤ 1.3).
	b.Run("floor", func(b *testing.B) {
		d, err := Apps(b.Context(), tree, Options{})
		if err != nil {
			b.Fatal(err)
		}
		paths := make([]string, len(d.Apps))
		for i, a := range d.Apps {
			paths[i] = a.Path
		}
		var floor, whole time.Duration
		for b.Loop() {
			start := time.Now()
			if err := krustyFloor(dir, paths); err != nil {
				b.Fatal(err)
			}
			floor += time.Since(start)
			b.StopTimer()
			start = time.Now()
			if _, err := Run(context.Background(), tree, Options{}); err != nil {
				b.Fatal(err)
			}
			whole += time.Since(start)
			b.StartTimer()
		}
		floorRSS, floorLive := childPeak(b, "floor", dir, benchAppsEnv+"="+strings.Join(paths, "\n"))
		checkRSS, checkLive := childPeak(b, "check", dir)
		b.ReportMetric(float64(len(paths)), "apps")
		b.ReportMetric(floorRSS, "peak-RSS-MB")
		b.ReportMetric(float64(whole)/float64(floor), "x-floor-time")
		b.ReportMetric(checkRSS/floorRSS, "x-floor-memory")
		b.ReportMetric(floorLive, "peak-live-MB")
		b.ReportMetric(checkLive, "check-peak-live-MB")
	})

	b.Run("kustomize+conftest", func(b *testing.B) {
		kustomize, conftest := os.Getenv(kustomizeEnv), os.Getenv(conftestEnv)
		if kustomize == "" || conftest == "" {
			b.Skipf("set %s and %s to the kustomize and conftest CLIs (make bench installs and sets them)", kustomizeEnv, conftestEnv)
		}
		cmp := newCLIComparison(b, tree, dir, kustomize, conftest)
		var peak float64
		var phases [2]time.Duration
		for b.Loop() {
			found, rss, took := cmp.run(b)
			if found != violations {
				b.Fatalf("conftest found %d violations, olmsync %d", found, violations)
			}
			peak = max(peak, rss)
			phases[0] += took[0]
			phases[1] += took[1]
		}
		b.ReportMetric(float64(violations), "violations")
		b.ReportMetric(peak, "peak-RSS-MB")
		b.ReportMetric(phases[0].Seconds()/float64(b.N), "kustomize-s/op")
		b.ReportMetric(phases[1].Seconds()/float64(b.N), "conftest-s/op")
	})
}

// cliComparison runs the kustomize CLI per app and conftest on the output.
type cliComparison struct {
	kustomize, conftest string
	repo, out, policies string
	data                string
	apps                []render.App
}

func newCLIComparison(b *testing.B, tree *sources.Tree, repo, kustomize, conftest string) *cliComparison {
	d, err := Apps(b.Context(), tree, Options{})
	if err != nil {
		b.Fatal(err)
	}
	// OLMSYNC_BENCH_KEEP keeps the kustomize output, the policies and the data in a
	// folder, to run conftest by hand.
	work := os.Getenv("OLMSYNC_BENCH_KEEP")
	if work == "" {
		work = b.TempDir()
	}
	c := &cliComparison{kustomize: kustomize, conftest: conftest, repo: repo, apps: d.Apps,
		out: filepath.Join(work, "out"), policies: filepath.Join(work, "policies"), data: filepath.Join(work, "data.json")}
	if err := os.MkdirAll(c.policies, 0o755); err != nil {
		b.Fatal(err)
	}

	// The policies: olmsync's built-in rules (tests left out) and the bridge.
	builtin, err := filepath.Glob(filepath.Join("..", "policy", "rego", "*.rego"))
	if err != nil || len(builtin) == 0 {
		b.Fatalf("built-in rules: %v", err)
	}
	for _, f := range append(builtin, filepath.Join("testdata", "conftest", "main.rego")) {
		if strings.HasSuffix(f, "_test.rego") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.policies, filepath.Base(f)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}

	// The facts about apps that kustomize's output lacks, and the policy settings.
	apps := map[string]any{}
	for _, a := range d.Apps {
		apps[c.outFile(a)] = map[string]any{
			"cluster": a.Cluster, "name": a.Name, "path": a.Path, "namespace": a.Namespace, "clusterScope": a.ClusterScope,
		}
	}
	clusterScoped := map[string]bool{}
	for _, kind := range []string{"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"} {
		clusterScoped[kind] = true
	}
	cfg := policy.DefaultConfig()
	doc, err := json.Marshal(map[string]any{"olmsync_bench": map[string]any{
		"apps": apps, "config": cfg, "clusterScoped": clusterScoped,
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(c.data, doc, 0o644); err != nil {
		b.Fatal(err)
	}
	return c
}

// outFile is where an app's kustomize output goes, relative to the output folder: the
// path conftest reports its documents under.
func (c *cliComparison) outFile(a render.App) string {
	return path.Join(a.Cluster, a.Name+".yaml")
}

// run builds every app with the kustomize CLI, GOMAXPROCS at a time, then runs conftest
// once; it returns the violations conftest found, the peak memory of the largest process,
// and how long each phase took.
func (c *cliComparison) run(b *testing.B) (violations int, peakMB float64, took [2]time.Duration) {
	start := time.Now()
	var mu sync.Mutex
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, a := range c.apps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out := filepath.Join(c.out, filepath.FromSlash(c.outFile(a)))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				b.Error(err)
				return
			}
			cmd := measured(c.kustomize, "build", filepath.Join(c.repo, filepath.FromSlash(a.Path)), "-o", out)
			output, err := cmd.CombinedOutput()
			if err != nil {
				b.Errorf("kustomize build %s: %v\n%s", a.Path, err, output)
				return
			}
			mu.Lock()
			peakMB = max(peakMB, measuredPeakMB(cmd, output))
			mu.Unlock()
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	took[0] = time.Since(start)
	start = time.Now()

	cmd := measured(c.conftest, "test", "--combine", "--no-color", "-o", "json",
		"-p", c.policies, "-d", c.data, ".")
	cmd.Dir = c.out // so that conftest's paths are <cluster>/<app>.yaml
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() > 1 {
		b.Fatalf("conftest: %v\n%s%s", err, stderr.Bytes(), stdout.Bytes())
	}
	took[1] = time.Since(start)
	peakMB = max(peakMB, measuredPeakMB(cmd, stderr.Bytes()))
	var results []struct {
		Warnings []json.RawMessage `json:"warnings"`
		Failures []json.RawMessage `json:"failures"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		b.Fatalf("conftest output: %v\n%s", err, stdout.Bytes())
	}
	for _, r := range results {
		violations += len(r.Failures) + len(r.Warnings)
	}
	return violations, peakMB, took
}

// childPeak runs one render or check (or nothing: idle) of the repository at dir in a
// fresh process and returns its peak resident memory and its peak live heap in MB.
func childPeak(b *testing.B, what, dir string, env ...string) (rssMB, liveMB float64) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), benchChildEnv+"="+what, benchRepoEnv+"="+dir), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("benchmark child %s: %v\n%s", what, err, out)
	}
	b.Logf("%s in a fresh process: %s", what, time.Since(start).Round(time.Millisecond))
	kb, _ := reportedKB(out, peakLiveLinePrefix)
	return measuredPeakMB(cmd, out), kb / 1024
}

// watchLiveHeap samples the live heap (as each garbage collection measures it) every
// millisecond until the returned function is called, which gives the largest seen in
// bytes. Where the RSS is, a profile shows only allocations; this says how much of the
// peak is data the program holds, and how much the garbage collector's headroom.
func watchLiveHeap() (peak func() uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var highest atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > highest.Load() {
				highest.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return highest.Load()
	}
}

// measured is a command whose peak memory measuredPeakMB can tell: run under GNU time
// where it is installed, which forks it from its own small process and prints its
// ru_maxrss (a child of the benchmark itself would report at least the benchmark's peak,
// see TestMain).
func measured(name string, args ...string) *exec.Cmd {
	if _, err := os.Stat(gnuTime); err == nil {
		return exec.Command(gnuTime, append([]string{"-f", peakLinePrefix + " %M", name}, args...)...)
	}
	return exec.Command(name, args...)
}

const gnuTime = "/usr/bin/time"

// measuredPeakMB is the peak memory of a finished measured command, from GNU time's line
// in its output, else getrusage (an upper bound).
func measuredPeakMB(cmd *exec.Cmd, output []byte) float64 {
	if kb, ok := reportedKB(output, peakLinePrefix); ok {
		return kb / 1024
	}
	return peakRSSMB(cmd.ProcessState)
}

// reportedKB reads the figure of the output's line starting with prefix.
func reportedKB(output []byte, prefix string) (float64, bool) {
	for line := range strings.Lines(string(output)) {
		if kb, ok := strings.CutPrefix(strings.TrimSpace(line), prefix+" "); ok {
			if n, err := strconv.ParseFloat(kb, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// peakLinePrefix starts the line on which a benchmark child reports its peak memory.
const peakLinePrefix = "olmsync-bench-peak-kb"

// peakLiveLinePrefix starts the line on which a benchmark child reports its peak live heap.
const peakLiveLinePrefix = "olmsync-bench-peak-live-kb"

// selfPeakKB is this process's peak resident memory (VmHWM) in kB, where /proc has it.
func selfPeakKB() (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// BenchmarkDiscovery measures what finding the apps costs next to the whole check of the
// same revision, on the generated repository of 300 apps and 5,000 objects: with its Argo
// CD Applications (Applications, then the roots they leave uncovered) and without them
// (300 kustomization roots, their clusters named by path conventions). It reports the
// time of each and discovery-%: discovery's share of the check (issue 11 asks for under 5).
func BenchmarkDiscovery(b *testing.B) {
	for _, withApplications := range []bool{true, false} {
		name := "roots"
		if withApplications {
			name = "argocd"
		}
		b.Run(name, func(b *testing.B) {
			files := rendertest.Benchmark.Files()
			if !withApplications {
				for p := range files {
					if strings.HasPrefix(p, "argocd/") {
						delete(files, p)
					}
				}
			}
			dir := b.TempDir()
			for p, content := range files {
				full := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			tree, err := sources.OpenWorkTree(dir, sources.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			var discovery, whole time.Duration
			for b.Loop() {
				start := time.Now()
				d, err := Apps(b.Context(), tree, Options{})
				if err != nil {
					b.Fatal(err)
				}
				discovery += time.Since(start)
				start = time.Now()
				res, err := Run(b.Context(), tree, Options{})
				if err != nil {
					b.Fatal(err)
				}
				whole += time.Since(start)
				if len(d.Apps) != rendertest.Benchmark.Apps() || !res.Complete() {
					b.Fatalf("%d apps, complete %t: %v", len(d.Apps), res.Complete(), res.Problems)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(discovery.Microseconds())/n/1000, "discovery-ms/op")
			b.ReportMetric(float64(whole.Microseconds())/n/1000, "check-ms/op")
			b.ReportMetric(100*float64(discovery)/float64(whole), "discovery-%")
		})
	}
}

// krustyFloor builds each app folder of the repository at dir with krusty alone, as many
// at once as the check builds apps (GOMAXPROCS), with krusty's defaults (plugins off, load
// restrictions on): the render floor of issue 18.
func krustyFloor(dir string, paths []string) error {
	fsys := filesys.MakeFsOnDisk()
	errs := make([]error, len(paths))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range paths {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
			m, err := k.Run(fsys, filepath.Join(dir, filepath.FromSlash(p)))
			if err == nil {
				_, err = m.AsYaml()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BenchmarkEvaluateCorpus evaluates the rules over gitops-catalog's inputs at its bundle's
// HEAD, rendered once: 309 inputs, nearly all library roots, each evaluated with the
// queries of the library rules alone (policy's prepare). It was 206–217 ms a round with
// every rule's queries, 82–89 ms with the library rules' (2026-11-28, load about 2).
func BenchmarkEvaluateCorpus(b *testing.B) {
	tree, err := sources.OpenWorkTree(shareddata.Corpus(b, b.TempDir(), shareddata.GitOpsCatalog), sources.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{}
	ropts := render.Options{Discovery: discoverOptions(tree, &opts)}
	rendered, err := render.Render(context.Background(), tree.FS, tree.Root, ropts)
	if err != nil {
		b.Fatal(err)
	}
	inputs := Inputs(rendered)
	e, err := policy.New(context.Background(), policy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Findings(context.Background(), inputs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(inputs)), "inputs")
}
