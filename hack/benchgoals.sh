#!/usr/bin/env bash
# benchgoals.sh reads `go test -bench` output (stdin) and prints each of issue 18's ratios
# (and issues 32 and 34) next to its goal, with "met" or "NOT met". The ratios are measured by the benchmarks in one
# run (check/bench_test.go, reconcile/olm/bench_test.go, reconcile/gitsync/bench_test.go);
# this only reads them. Exit status 0 either way: a benchmark is
# a measurement, not a test.
set -euo pipefail

awk '
function goal(bench, metric, limit, what,    v) {
	v = val[bench SUBSEP metric]
	if (v == "") { printf "  %-52s %10s   goal <= %-5s %s\n", what, "not run", limit, ""; return }
	printf "  %-52s %10.3f   goal <= %-5s %s\n", what, v, limit, (v + 0 <= limit + 0 ? "met" : "NOT met")
}
function info(bench, metric, what,    v) {
	v = val[bench SUBSEP metric]
	if (v != "") printf "  %-52s %10.3f   (no goal)\n", what, v
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) if ($(i+1) ~ /^[a-zA-Z][-a-zA-Z\/]*$/ && $i ~ /^[0-9.e+-]+$/) val[name SUBSEP $(i+1)] = $i
	print
	next
}
{ print }
END {
	print ""
	print "Issue 18 goals (ratios measured in the same benchmark run):"
	goal("BenchmarkCheck/floor", "x-floor-time", "1.25", "check time / krusty-alone render floor")
	goal("BenchmarkCheck/floor", "x-floor-memory", "1.3", "check peak memory / render floor peak memory")
	goal("BenchmarkCheck/pr-one-app-changed", "x-plain-check", "1.2", "PR check (one app of 300 changed) / plain check")
	goal("BenchmarkSteadyState", "x-write-only", "2", "OLM steady state (500 Subscriptions) / write-only")
	info("BenchmarkSteadyState", "x-apiserver-cpu", "  API server CPU for it, controllers / write-only")
	info("BenchmarkSteadyState", "x-writes-only", "  writes of the controllers alone / write-only")
	goal("BenchmarkSteadyState", "manager-heap-MB", "150", "OLM manager peak heap above the baseline (MiB)")
	goal("BenchmarkManySyncs", "x-apply-only", "2", "200 Syncs x 50 objects after a commit / apply alone")
	print ""
	print "Issue 32 goals (the built binary as a process, medians of alternated rounds):"
	goal("BenchmarkProcessCheck/gitops-catalog", "x-floor-time", "1.2", "check / floor, wall, gitops-catalog at 7727f24")
	goal("BenchmarkProcessCheck/gitops-catalog", "x-floor-rss", "1.5", "check / floor, peak RSS, gitops-catalog")
	info("BenchmarkProcessCheck/gitops-catalog", "x-floor-rss-least", "  least possible: (check start + floor render)/floor")
	info("BenchmarkProcessCheck/gitops-catalog", "x-floor-cpu", "  check / floor, CPU time, gitops-catalog")
	goal("BenchmarkProcessCheck/generated", "x-floor-time", "1.2", "check / floor, wall, generated repository")
	goal("BenchmarkProcessCheck/generated", "x-floor-rss", "1.5", "check / floor, peak RSS, generated repository")
	info("BenchmarkProcessCheck/generated", "x-floor-rss-least", "  least possible: (check start + floor render)/floor")
	info("BenchmarkProcessCheck/generated", "x-floor-cpu", "  check / floor, CPU time, generated repository")
	goal("BenchmarkProcessIdle", "MB-idle-version", "40", "olmsync version, resident MB")
	goal("BenchmarkProcessIdle", "MB-idle-check-help", "40", "olmsync check --help, resident MB")
	goal("BenchmarkProcessPR", "x-pr-head-median", "1.2", "base+head / head alone, 25 merges, median")
	goal("BenchmarkProcessPR", "x-pr-head-worst", "1.2", "base+head / head alone, 25 merges, worst")
	goal("BenchmarkSteadyState", "x-own-writes", "1.3", "OLM steady state / its own writes replayed alone")
	info("BenchmarkSteadyState", "x-own-writes-min", "  the least of its rounds")
	info("BenchmarkSteadyState", "x-own-writes-max", "  the most of its rounds")
	goal("BenchmarkSteadyState", "requests-per-subscription", "43.99", "manager API requests per Subscription (< 44)")
	goal("BenchmarkSteadyState", "manager-heap-MB", "149.99", "OLM manager peak heap (MiB, < 150)")
	print ""
	print "Issue 34 goals (the dashboard'\''s graph of a Sync of 511 objects in chromium, ms):"
	goal("BenchmarkGraph", "expand-all-draw-ms", "1000", "every node drawn: click to the frame painted")
	goal("BenchmarkGraph", "load-to-graph-ms", "1000", "navigation to the graph on the page")
}'
