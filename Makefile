# brain — run `make help` for the targets.
GO      ?= go
BIN     ?= bin/brain
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X main.version=$(VERSION)

.DEFAULT_GOAL := help
.PHONY: help build run test bench lint schema redis-server interop

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/brain
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/brain

run: build ## build and run `brain serve`
	./$(BIN) serve

test: redis-server interop ## go vet, then every test with the race detector (needs redis-server, installed when possible; Node.js for the interop tests)
	$(GO) vet ./...
	$(GO) test -race ./...

bench: redis-server ## run the Go benchmarks, then `brain bench` (turns/s, Redis cost per turn, wake latency, idle cost), then `brain bench --cluster 3` (a 3-master Redis Cluster against one Redis)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./cmd/brain bench
	$(GO) run ./cmd/brain bench --cluster 3 --idle 0

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

schema: ## regenerate recipes/recipe.schema.json from the Go types
	$(GO) run ./cmd/brain recipe schema > recipes/recipe.schema.json

# Tests that check Redis semantics run a real redis-server. Install Debian's
# package when it is missing and we may (root or sudo); otherwise say how.
redis-server:
	@if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing redis-server (apt-get)"; \
	  (apt-get install -y redis-server || (apt-get update && apt-get install -y redis-server)) >/dev/null; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing redis-server (sudo apt-get)"; \
	  (sudo apt-get install -y redis-server || (sudo apt-get update && sudo apt-get install -y redis-server)) >/dev/null; \
	else \
	  echo "redis-server is not installed: tests that need Redis will be SKIPPED."; \
	  echo "Install it with: sudo apt-get install -y redis-server  (or: brew install redis)"; \
	fi

# The interop tests drive brain with the official clients pinned in
# interop/package-lock.json. Install them when npm is here and they are not;
# without Node.js those tests are skipped (loudly).
interop:
	@if [ -f interop/node_modules/.package-lock.json ]; then exit 0; fi; \
	if command -v npm >/dev/null 2>&1; then \
	  echo "installing the interop tests' clients (npm ci in interop/)"; \
	  cd interop && npm ci --no-audit --no-fund >/dev/null; \
	else \
	  echo "npm is not installed: the interop tests will be SKIPPED."; \
	  echo "Install it with: sudo apt-get install -y nodejs npm"; \
	fi
