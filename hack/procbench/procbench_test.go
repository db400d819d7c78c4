// Package procbench measures what users run: the built olmsync binary as a whole process
// (its start-up, its resident memory, the shape of real repositories), against the render
// floor — hack/floor, kustomize's krusty rendering the same roots as its own process — and
// against itself (a pull request's base and head against the head alone). `make bench`
// builds the binaries and runs it; hack/benchgoals.sh prints each ratio beside its goal.
//
// The machine may be shared and noisy: each figure is the median of rounds that alternate
// the two commands compared (PROCBENCH_ROUNDS, 5 by default). Binaries are run from copies
// written as any download is: the linker's own output sits in the page cache in large
// folios, which inflate the resident size of a process that runs it (96 MB against 61 MB
// for the same bytes copied, measured for the full build).
package procbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/shareddata"
	"github.com/olmsync/olmsync/render/rendertest"
)

// binaries are the copies of the built binaries the benchmarks run, and spawn, which runs
// each (spawn/main.go says why).
type binaries struct{ olmsync, floor, spawn string }

func built(b *testing.B) binaries {
	b.Helper()
	bin := os.Getenv("OLMSYNC_BIN")
	floor := os.Getenv("OLMSYNC_FLOOR_BIN")
	if bin == "" || floor == "" {
		b.Skip("OLMSYNC_BIN and OLMSYNC_FLOOR_BIN are not set: `make bench` builds bin/olmsync and bin/floor")
	}
	dir := b.TempDir()
	spawn := filepath.Join(dir, "spawn")
	if out, err := exec.Command("go", "build", "-o", spawn, "./spawn").CombinedOutput(); err != nil {
		b.Fatalf("build spawn: %v\n%s", err, out)
	}
	return binaries{olmsync: copyExecutable(b, bin, dir), floor: copyExecutable(b, floor, dir), spawn: spawn}
}

// copyExecutable copies a binary in 64 KB writes, as a download or an archive is
// written: the page cache holds what one large write wrote in large folios, and a process
// whose binary is mapped from them counts them whole in its resident size (a 58 MB write
// in one call: 54 MB resident at start; the same bytes written 64 KB at a time: 35 MB).
func copyExecutable(b *testing.B, src, dir string) string {
	b.Helper()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, filepath.Base(src))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, in, make([]byte, 64<<10)); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return dst
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("PROCBENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// measure is one run of a process: wall time, CPU time and peak resident size.
type measure struct {
	wall, cpu time.Duration
	rssKB     int64
	exit      int
}

// runProcess runs name through spawn, in dir, and reads what spawn measured.
func (bins binaries) run(b *testing.B, dir string, name string, args ...string) measure {
	b.Helper()
	cmd := exec.Command(bins.spawn, append([]string{name}, args...)...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.ProcessState == nil {
		b.Fatalf("%s: %v", name, err)
	}
	m := measure{exit: cmd.ProcessState.ExitCode()}
	if m.exit > 2 {
		b.Fatalf("%s %v: exit %d\n%s%s", name, args, m.exit, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	var cpu, wall float64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "spawn-rusage %d %f %f", &m.rssKB, &cpu, &wall); err != nil {
		b.Fatalf("spawn said %q: %v", lines[len(lines)-1], err)
	}
	m.cpu, m.wall = time.Duration(cpu*float64(time.Second)), time.Duration(wall*float64(time.Second))
	return m
}

// median is the middle value, or the mean of the middle two for an even count (PROCBENCH_ROUNDS=10,
// or BenchmarkProcessPR's two runs a side by default): the upper one alone is the worse of two.
func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

type series struct {
	wall, cpu []time.Duration
	rss       []int64
}

func (s *series) add(m measure) {
	s.wall, s.cpu, s.rss = append(s.wall, m.wall), append(s.cpu, m.cpu), append(s.rss, m.rssKB)
}

// BenchmarkProcessCheck: `olmsync check -o json` of every root, every rule, against the
// floor rendering the same roots; on redhat-cop/gitops-catalog at 7727f24 and on the
// generated ADR-shaped repository.
func BenchmarkProcessCheck(b *testing.B) {
	bins := built(b)
	for _, repo := range []struct {
		name string
		dir  func(b *testing.B) string
	}{
		{"gitops-catalog", func(b *testing.B) string {
			dir := shareddata.Corpus(b, b.TempDir(), shareddata.GitOpsCatalog)
			gittest.Git(b, dir, "checkout", "-q", shareddata.GitOpsCatalogHead)
			return dir
		}},
		{"generated", func(b *testing.B) string {
			dir := gittest.Init(b)
			gittest.Commit(b, dir, rendertest.Shape{Clusters: 10, AppsPerCluster: 29}.Files(), "generated")
			return dir
		}},
	} {
		b.Run(repo.name, func(b *testing.B) {
			dir := repo.dir(b)
			roots := writeRoots(b, bins, dir)
			var check, floor series
			var checkStart, floorStart []int64
			for range rounds() {
				check.add(bins.run(b, dir, bins.olmsync, "check", ".", "-o", "json"))
				floor.add(bins.run(b, dir, bins.floor, dir, roots))
				checkStart = append(checkStart, bins.run(b, dir, bins.olmsync, "check", "--help").rssKB)
				floorStart = append(floorStart, bins.run(b, dir, bins.floor).rssKB)
			}
			b.ReportMetric(median(check.wall).Seconds(), "s-check")
			b.ReportMetric(median(floor.wall).Seconds(), "s-floor")
			b.ReportMetric(median(check.wall).Seconds()/median(floor.wall).Seconds(), "x-floor-time")
			b.ReportMetric(median(check.cpu).Seconds()/median(floor.cpu).Seconds(), "x-floor-cpu")
			b.ReportMetric(float64(median(check.rss))/1024, "MB-check")
			b.ReportMetric(float64(median(floor.rss))/1024, "MB-floor")
			b.ReportMetric(float64(median(check.rss))/float64(median(floor.rss)), "x-floor-rss")
			// What the RSS goal leaves: the check pays its own start and renders the same roots
			// with the same krusty on as many workers, so its peak is at least its start plus what
			// the floor's render adds to the floor's start. x-floor-rss-least is that sum over the
			// floor's peak — the least x-floor-rss a check of this binary could measure.
			b.ReportMetric(float64(median(checkStart))/1024, "MB-check-start")
			b.ReportMetric(float64(median(floorStart))/1024, "MB-floor-start")
			floorRender := median(floor.rss) - median(floorStart)
			b.ReportMetric(float64(floorRender)/1024, "MB-floor-render")
			b.ReportMetric(float64(median(checkStart)+floorRender)/float64(median(floor.rss)), "x-floor-rss-least")
			b.Logf("check wall %v, floor wall %v (rounds alternated; spread check %v..%v, floor %v..%v)",
				check.wall, floor.wall, slices.Min(check.wall), slices.Max(check.wall), slices.Min(floor.wall), slices.Max(floor.wall))
		})
	}
}

// writeRoots lists the kustomization roots olmsync checks (olmsync apps), for the floor.
func writeRoots(b *testing.B, bins binaries, dir string) string {
	b.Helper()
	out, err := exec.Command(bins.olmsync, "apps", dir, "-o", "json").Output()
	if err != nil {
		b.Fatalf("olmsync apps: %v", err)
	}
	var d struct {
		Apps []struct {
			Path string `json:"path"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		b.Fatal(err)
	}
	var roots []string
	for _, a := range d.Apps {
		for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
			if _, err := os.Stat(filepath.Join(dir, a.Path, name)); err == nil {
				roots = append(roots, a.Path)
				break
			}
		}
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	file := filepath.Join(b.TempDir(), "roots")
	if err := os.WriteFile(file, []byte(strings.Join(roots, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return file
}

// BenchmarkProcessIdle: the resident memory of the command users run before it does
// anything (olmsync version, olmsync check --help).
func BenchmarkProcessIdle(b *testing.B) {
	bins := built(b)
	for _, args := range [][]string{{"version"}, {"check", "--help"}} {
		var rss []int64
		for range rounds() {
			rss = append(rss, bins.run(b, b.TempDir(), bins.olmsync, args...).rssKB)
		}
		b.ReportMetric(float64(median(rss))/1024, "MB-idle-"+strings.ReplaceAll(strings.Join(args, "-"), "--", ""))
	}
}

// BenchmarkProcessPR replays the last 25 merges of gitops-catalog that touch an OLM
// object: `check --base <first parent> --ref <merge>` against `check --ref <merge>` alone,
// each pair run in alternation; the median and the worst ratio.
func BenchmarkProcessPR(b *testing.B) {
	bins := built(b)
	dir := shareddata.Corpus(b, b.TempDir(), shareddata.GitOpsCatalog)
	merges := shareddata.OLMMerges(b, dir, 25)
	var ratios []float64
	for _, m := range merges {
		var head, pr []time.Duration
		for range max(rounds()/2, 2) {
			head = append(head, bins.run(b, dir, bins.olmsync, "check", ".", "--ref", m, "-o", "json").wall)
			pr = append(pr, bins.run(b, dir, bins.olmsync, "check", ".", "--ref", m, "--base", m+"^1", "--fail-on", "new", "-o", "json").wall)
		}
		r := median(pr).Seconds() / median(head).Seconds()
		ratios = append(ratios, r)
		b.Logf("merge %s: head %v, base+head %v: %.2f", m[:8], median(head), median(pr), r)
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-pr-head-median")
	b.ReportMetric(ratios[len(ratios)-1], "x-pr-head-worst")
	b.ReportMetric(float64(len(ratios)), "merges")
}
