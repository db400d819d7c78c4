# olmsync's build. `make test` is the one command CI runs (.ci/run): it installs every tool
# it needs, builds the pinned kube-apiserver and etcd for envtest, checks that generated
# files are current, lints, and runs every test.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := build

# The Go toolchain is go.mod's toolchain line (Go 1.27: the newest fluxcd/pkg modules need
# it). Exported, it wins over a GOTOOLCHAIN the environment sets (local included), so that
# a machine with Go 1.26 fetches it through the module proxy, as the go command fetches any
# module, and every go command here, and every one a test runs, uses it.
GO_TOOLCHAIN := $(shell awk '$$1 == "toolchain" {print $$2}' go.mod)
export GOTOOLCHAIN := $(GO_TOOLCHAIN)

# Everything built once and reused across clones (tools, envtest binaries) lives in a cache
# folder keyed by version, so a fresh clone does not rebuild it and a pin change does. Tools
# are keyed by the toolchain too: golangci-lint, deadcode and controller-gen type-check this
# module with the standard library they were built with, which must know its Go version.
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/olmsync
TOOLS_DIR := $(CACHE_DIR)/tools/$(GO_TOOLCHAIN)

# Pinned tools, installed through the Go module proxy.
CONTROLLER_GEN_VERSION := v0.23.0
GOLANGCI_LINT_VERSION  := v2.15.0
# deadcode (golang.org/x/tools) finds exported functions nothing calls, tests included,
# which golangci-lint's unused does not look for.
DEADCODE_VERSION       := v0.52.0
# The OPA CLI runs the Rego tests as the library olmsync links does (the same version).
OPA_VERSION            := v1.22.4
# Only `make bench` uses these: BenchmarkCheck compares olmsync with the kustomize CLI and
# conftest. kustomize v5.8.3 needs a k8s.io/kube-openapi snapshot the module proxy does not
# serve (as kustomize/api v0.21.3 does, which is why go.mod stays at v0.21.2), so v5.8.2, the
# kustomize olmsync links; conftest v0.71.1 is the newest release.
# helm lints the chart in `make test` (helm-lint): the release of the library the chart
# tests use (go.mod).
HELM_VERSION           := v3.22.0
KUSTOMIZE_VERSION      := v5.8.2
CONFTEST_VERSION       := v0.71.1
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen
GOLANGCI_LINT  := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
DEADCODE       := $(TOOLS_DIR)/deadcode-$(DEADCODE_VERSION)/deadcode
OPA            := $(TOOLS_DIR)/opa-$(OPA_VERSION)/opa
HELM           := $(TOOLS_DIR)/helm-$(HELM_VERSION)/helm
KUSTOMIZE      := $(TOOLS_DIR)/kustomize-$(KUSTOMIZE_VERSION)/kustomize
CONFTEST       := $(TOOLS_DIR)/conftest-$(CONFTEST_VERSION)/conftest

# The test control plane. Versions are pinned in the wrapper modules under hack/envtest;
# the cache folder is named after them, so changing a pin builds a new pair.
KUBE_VERSION := $(shell grep -oE 'k8s.io/kubernetes v[0-9.]+' hack/envtest/kube-apiserver/go.mod | cut -d' ' -f2)
ETCD_VERSION := $(shell grep -oE 'go.etcd.io/etcd/server/v3 v[0-9.]+' hack/envtest/etcd/go.mod | cut -d' ' -f2)
KUBE_MINOR   := $(word 2,$(subst ., ,$(KUBE_VERSION)))
ENVTEST_DIR  := $(CACHE_DIR)/envtest/kube-$(KUBE_VERSION)-etcd-$(ETCD_VERSION)
# Without these the server reports v0.0.0 and every CSV minKubeVersion check breaks.
KUBE_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(KUBE_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean \
	-X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

# -timeout: go test's default (10m a package) is near what the envtest packages take under
# -race on a loaded 2-core machine (reconcile/gitsync took 6m42s in CI); a package that runs
# past it panics with every goroutine's stack instead of failing a test.
GO_TEST_FLAGS ?= -race -count=1 -timeout 30m
# The dashboard's browser test (dashboard/browser_test.go): Debian's chromium, driven by
# playwright-core from the npm registry, installed from the lockfile with npm ci (no
# browser download). `make browser-deps` installs both; the test fails without them
# when CI is set, and is skipped with a message otherwise.
CHROMIUM    ?= /usr/bin/chromium
BROWSER_DIR := dashboard/testdata/browser
# How long `make fuzz` (part of `make test`) runs each fuzz test, and which packages: every
# parser and decoder of outside input has one (render, safeyaml, catalogs, operators.Decode,
# the webhook, olmsync.yaml, waivers, cluster snapshots, ...). `make fuzz-long` runs them
# for 10 minutes each, or for the FUZZTIME given on its command line.
FUZZTIME ?= 2s
FUZZ_PKGS ?= ./...

##@ Build

# Two builds of one command (cmd/olmsync), both static (no cgo: no libc mapped at start-up)
# and stripped: bin/olmsync, the light build (tag olmsync_light) users run for check, apps,
# catalog and bundle, which links no Kubernetes client, controller or Helm (36 MB resident
# at start against 55 MB for the full build, Go 1.27.3, 2026-11-28); and bin/olmsync-cluster, the full build, to
# which olmsync hands run, install and the verbs on Syncs (and check --kubeconfig).
.PHONY: build
build: ## Build bin/olmsync (the light build: check, apps, catalog, bundle) and bin/olmsync-cluster (the full build, which olmsync runs for run, install, get, diff...).
	CGO_ENABLED=0 go build -trimpath -tags olmsync_light -ldflags "-s -w $(LDFLAGS)" -o bin/olmsync ./cmd/olmsync
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)" -o bin/olmsync-cluster ./cmd/olmsync

# The image is reproducible: its every timestamp, and the binary's build date, are the last
# commit's time unless SOURCE_DATE_EPOCH says otherwise.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_REPOSITORY  ?= ghcr.io/olmsync/olmsync
IMAGE_PLATFORMS   ?= linux/$(shell go env GOARCH)

.PHONY: image
image: ## Build the container image without Docker: bin/image/oci (OCI layout) and bin/image/olmsync.tar (docker load, crane push).
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/image --platforms $(IMAGE_PLATFORMS) \
		--version $(VERSION) --revision $(COMMIT) --repository $(IMAGE_REPOSITORY) --out bin/image

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code and CRDs from the API types; copy the CRDs into the chart; the chart README's values table.
	$(CONTROLLER_GEN) object paths=./api/...
	rm -f api/crds/*.yaml
	$(CONTROLLER_GEN) crd:crdVersions=v1 output:crd:dir=api/crds paths=./api/...
	go run ./hack/crdpatch api/crds
	rm -rf charts/olmsync/files/crds && mkdir -p charts/olmsync/files/crds && cp api/crds/*.yaml charts/olmsync/files/crds/
	go run ./hack/chartdocs charts/olmsync

.PHONY: verify
verify: generate ## Fail when generated files are stale or go.mod is untidy.
	go mod tidy
	@if [ -n "$$(git status --porcelain -- api charts go.mod go.sum)" ]; then \
		git status --porcelain -- api charts go.mod go.sum; \
		git --no-pager diff --stat -- api charts go.mod go.sum; \
		echo "generated files or go.mod are stale: run 'make generate' and 'go mod tidy', and commit the result"; \
		exit 1; \
	fi

##@ Test

.PHONY: test
test: verify lint helm-lint envtest test-rego browser-deps build ## Everything CI checks: generated files, lint, the chart's helm lint, Rego tests with the OPA CLI, every Go test (envtest included), the hostile inputs against the built binary, and a short fuzz run.
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) OLMSYNC_BIN=$(CURDIR)/bin/olmsync go test $(GO_TEST_FLAGS) ./...
	FUZZ_FRESH_CORPUS=1 hack/fuzz.sh $(FUZZTIME) $(FUZZ_PKGS)

.PHONY: hostile
hostile: build ## The hostile inputs (hack/hostile): the built binary, as a process, under ulimit -v 3000000 and a kill timeout, on YAML bombs, growing Rego, lying names, escaping links; logs exit, peak RSS and wall time of each.
	OLMSYNC_BIN=$(CURDIR)/bin/olmsync go test -count=1 -v -timeout 30m ./hack/hostile/

.PHONY: fuzz
fuzz: ## Run each fuzz test of FUZZ_PKGS (default: all of them) for FUZZTIME (default 2s), from its seeds only (not the corpus earlier runs cached).
	FUZZ_FRESH_CORPUS=1 hack/fuzz.sh $(FUZZTIME) $(FUZZ_PKGS)

.PHONY: fuzz-long
fuzz-long: ## A fuzz campaign: each fuzz test for 10m (make fuzz-long FUZZTIME=1h), one at a time; FUZZ_PARALLEL=1 on a shared machine.
	hack/fuzz.sh $(if $(filter command line,$(origin FUZZTIME)),$(FUZZTIME),10m) $(FUZZ_PKGS)

.PHONY: test-go
test-go: envtest browser-deps ## Only the Go tests (envtest included), without verify and lint.
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) go test $(GO_TEST_FLAGS) ./...

.PHONY: browser-deps
browser-deps: ## Debian's chromium (apt-get install as root, when $(CHROMIUM) is missing) and the browser test's node modules (npm ci).
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing chromium with apt-get"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		elif [ -n "$$CI" ]; then \
			echo "$(CHROMIUM) is missing and cannot be installed here (not root, or no apt-get): apt-get install -y chromium" >&2; exit 1; \
		else \
			echo "$(CHROMIUM) is missing: the dashboard's browser test will be skipped (apt-get install -y chromium as root)"; \
		fi; \
	fi
	@if command -v npm >/dev/null; then \
		cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; \
	elif [ -n "$$CI" ]; then \
		echo "npm is missing: the dashboard's browser test needs node and npm" >&2; exit 1; \
	else \
		echo "npm is missing: the dashboard's browser test will be skipped"; \
	fi

.PHONY: test-rego
test-rego: $(OPA) ## The Rego unit tests (built-in rules and the example user policy), with the plain OPA CLI; go test runs them too.
	$(OPA) test policy/

.PHONY: lint
lint: $(GOLANGCI_LINT) $(DEADCODE) ## go vet, golangci-lint, and deadcode (no function called from nowhere, tests included).
	go vet ./...
	go vet -tags olmsync_light ./cmd/olmsync # the light build's own files, and the tests that run in it
	$(GOLANGCI_LINT) run ./...
	@dead="$$($(DEADCODE) -test ./...)"; if [ -n "$$dead" ]; then echo "$$dead"; echo "deadcode: the functions above are called from nowhere, tests included"; exit 1; fi

.PHONY: helm-lint
helm-lint: $(HELM) ## helm lint of charts/olmsync, with the defaults and with every optional object on.
	$(HELM) lint --strict charts/olmsync
	$(HELM) lint --strict charts/olmsync --set replicaCount=2,metrics.serviceMonitor.enabled=true,webhook.ingress.enabled=true,webhook.ingress.hosts[0]=hooks.example.com

.PHONY: bench
bench: envtest build $(KUSTOMIZE) $(CONFTEST) ## Run the benchmarks — hack/procbench runs the built binary as a process against bin/floor (krusty alone, same roots) on the corpus and the generated repository; BenchmarkCheck also runs the kustomize CLI and conftest — and print every ratio next to its goal; figures go into the closing notes of the issues.
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/floor ./hack/floor
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) OLMSYNC_KUSTOMIZE=$(KUSTOMIZE) OLMSYNC_CONFTEST=$(CONFTEST) \
		OLMSYNC_BIN=$(CURDIR)/bin/olmsync OLMSYNC_FLOOR_BIN=$(CURDIR)/bin/floor \
		go test -run '^$$' -bench . -benchmem -timeout 60m ./... | hack/benchgoals.sh

.PHONY: bench-graph
bench-graph: envtest browser-deps ## The dashboard's resource graph of a Sync of 511 objects in chromium (BenchmarkGraph): load to graph, and every node drawn, in ms (medians of 5 rounds).
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) CI=true go test -run '^$$' -bench '^BenchmarkGraph$$' -benchtime 1x ./dashboard/ | hack/benchgoals.sh

##@ Test control plane

.PHONY: envtest
envtest: $(ENVTEST_DIR)/kube-apiserver $(ENVTEST_DIR)/etcd ## Build the pinned kube-apiserver and etcd; link them as bin/k8s.
	@mkdir -p bin && ln -sfn $(ENVTEST_DIR) bin/k8s
	@echo "envtest binaries: $(ENVTEST_DIR) (kube-apiserver $(KUBE_VERSION), etcd $(ETCD_VERSION))"

# The control plane's wrapper modules are built with the machine's own Go (GOTOOLCHAIN=local):
# they need Go 1.26, not olmsync's 1.27, and the pinned Kubernetes and etcd are built and
# cached (once per pin) with the Go they were tried with.
$(ENVTEST_DIR)/kube-apiserver:
	@mkdir -p $(@D)
	cd hack/envtest/kube-apiserver && GOTOOLCHAIN=local go build -trimpath -ldflags "$(KUBE_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $@.tmp $@

$(ENVTEST_DIR)/etcd:
	@mkdir -p $(@D)
	cd hack/envtest/etcd && GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o $@.tmp .
	mv $@.tmp $@

##@ Tools

$(CONTROLLER_GEN):
	GOBIN=$(@D) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

$(GOLANGCI_LINT):
	GOBIN=$(@D) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

$(DEADCODE):
	GOBIN=$(@D) go install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)

$(OPA):
	GOBIN=$(@D) go install github.com/open-policy-agent/opa@$(OPA_VERSION)

$(HELM):
	GOBIN=$(@D) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(KUSTOMIZE):
	GOBIN=$(@D) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

$(CONFTEST):
	GOBIN=$(@D) go install github.com/open-policy-agent/conftest@$(CONFTEST_VERSION)

.PHONY: clean
clean: ## Remove bin/ (the cache folder is kept).
	rm -rf bin

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
