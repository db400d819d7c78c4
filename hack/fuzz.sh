#!/usr/bin/env bash
# Runs every fuzz test (func FuzzXxx) of the given packages for a given time each, one
# after the other, so that CI exercises the parsers of outside input with fresh inputs on
# every run, not only with their seed corpora (which plain `go test` already runs), and a
# long campaign (make fuzz-long) can run them for minutes each. Each target prints one
# line: its package, name, executions and time. A failing input is written under the
# package's testdata/fuzz/ by `go test`; commit it with the fix, as a regression seed. Any
# failure fails the script: the module needs Go 1.27 (go.mod), whose fuzz coordinator no
# longer ends a run at -fuzztime's deadline with a bare "context deadline exceeded"
# (go.dev/issue/75804), which Go 1.26 did now and then and this script ran again.
# Minimizing a new interesting input is capped at 100 runs: with the default (60s) a short
# run spends most of its time minimizing instead of fuzzing.
#
# usage: hack/fuzz.sh [FUZZTIME] [PACKAGES...]   (defaults: 3s, ./...)
# FUZZ_PARALLEL sets -parallel (default: GOMAXPROCS); FUZZ_RUN keeps only the targets
# whose name matches that extended regular expression. FUZZ_FRESH_CORPUS=1 starts each
# target from its seeds in an empty corpus folder instead of the corpus earlier runs cached
# in GOCACHE: before it fuzzes, the engine runs every cached entry to gather coverage, and
# with a grown corpus that takes longer than a run of seconds (0 execs), so the short run of
# `make test` and `make fuzz` uses it; a campaign (make fuzz-long) builds on the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-3s}"
shift || true
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(./...)
fi
flags=(-run '^$' -fuzztime "$fuzztime" -fuzzminimizetime 100x)
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	flags+=(-parallel "$FUZZ_PARALLEL")
fi
corpus=""
if [ "${FUZZ_FRESH_CORPUS:-}" = 1 ]; then
	corpus=$(mktemp -d)
	trap 'rm -rf "$corpus"' EXIT
fi
total=0
for pkg in $(go list "${pkgs[@]}"); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	for target in $targets; do
		if [ -n "${FUZZ_RUN:-}" ] && ! [[ $target =~ $FUZZ_RUN ]]; then
			continue
		fi
		start=$SECONDS
		cacheflags=()
		if [ -n "$corpus" ]; then
			cacheflags=(-test.fuzzcachedir "$corpus/$target")
		fi
		if ! out=$(go test "${flags[@]}" -fuzz "^${target}\$" "$pkg" "${cacheflags[@]}" 2>&1); then
			echo "$out"
			echo "fuzz $pkg $target: FAILED (the failing input is under $dir/testdata/fuzz/$target)"
			exit 1
		fi
		execs=$(echo "$out" | sed -n 's/.*execs: \([0-9]*\) .*/\1/p' | tail -1)
		echo "fuzz $pkg $target: ${execs:-0} execs in $((SECONDS - start))s, no failure"
		total=$((total + ${execs:-0}))
	done
done
echo "fuzz: $total execs in all"
