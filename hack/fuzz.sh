#!/usr/bin/env bash
# Runs every fuzz test (func FuzzXxx) of the given packages for a short time each, so that
# CI exercises the parsers of outside input with fresh inputs on every run, not only with
# their seed corpora (which plain `go test` already runs). A failing input is written under
# the package's testdata/fuzz/ by `go test`; commit it with the fix. Minimizing a new
# interesting input is capped at 100 runs: with the default (60s) a short run spends most of
# its time minimizing instead of fuzzing.
#
# usage: hack/fuzz.sh [FUZZTIME] [PACKAGES...]   (defaults: 3s, ./reconcile/olm/...)
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-3s}"
shift || true
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(./reconcile/olm/...)
fi
for pkg in $(go list "${pkgs[@]}"); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	for target in $targets; do
		echo "fuzz $pkg $target ($fuzztime)"
		if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "$pkg" 2>&1); then
			echo "$out"
			exit 1
		fi
	done
done
