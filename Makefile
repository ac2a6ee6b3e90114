# parkinglot — two commands: `make demo` and `make test`.
GO      ?= go
BIN     := bin/parkinglot
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Integration tests talk to this broker.
export AMQP_URL       ?= amqp://guest:guest@127.0.0.1:5672/
export MANAGEMENT_URL ?= http://guest:guest@127.0.0.1:15672
# The fault tests append their figures lines here (go test hides a passing
# package's output); test and chaos print the file at the end.
FIGURES := $(CURDIR)/bin/figures.txt

.PHONY: all build broker test test-on test-version test-cluster vet bench fuzz chaos demo clean completions

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

## broker: make sure RabbitMQ (with the management API) answers locally; idempotent
broker:
	@./.ci/ensure-broker

## monitoring: Prometheus (with promtool) and Alertmanager from Debian's
## packages, for the alerting tests (each test starts its own on free ports)
.PHONY: monitoring
monitoring:
	@./.ci/monitoring install

## brokers: RabbitMQ 4.0 (Debian trixie) and 4.3 (Debian sid) beside the
## system broker, each in a chroot under /var/lib/parkinglot-brokers with its
## own ports (see .ci/brokers); provisioned on first use, idempotent
.PHONY: brokers cluster
brokers:
	@./.ci/brokers up

## cluster: three RabbitMQ 4.3 nodes (Debian sid chroot) joined into one cluster; idempotent
cluster:
	@./.ci/brokers cluster

## test: (build tag "integration": the tests that need a broker; plain
## `go test ./...` runs only the pure ones) against each broker of
## TEST_BROKERS (the system's 3.10 and the 4.0 and 4.3 of make brokers), the
## three at once: each is its own broker, and the suites mostly wait on it
## (measured: two at once took 980 s, one after the other ~1,430 s). Each
## runs the unit and integration tests, then the fault tests that restart
## its broker (build tag "chaos") one package at a time, since a restart
## would disturb every other test on that broker. Its output goes to
## bin/test-NAME.log, printed as it ends. The race detector runs on the
## suites of RACE_BROKERS: the client code is the same on every version,
## and -race on all three costs the others CPU. Then the cluster phase.
TEST_BROKERS ?= system 4.0 4.3
RACE_BROKERS ?= 4.3
test: broker brokers monitoring build
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) vet -tags 'chaos integration' ./...
	$(GO) vet -tags 'cluster integration' ./...
	@rm -f $(FIGURES) $(TIMES)
	@t0=$$(date +%s); pids=""; for b in $(TEST_BROKERS); do \
	  $(MAKE) --no-print-directory test-version BROKER=$$b > bin/test-$$b.log 2>&1 & pids="$$pids $$b:$$!"; done; \
	  echo "the suites against $(TEST_BROKERS) run at once (logs: bin/test-NAME.log)"; \
	  fail=""; for bp in $$pids; do b=$${bp%%:*}; wait $${bp#*:} || fail="$$fail $$b"; cat bin/test-$$b.log; done; \
	  echo "the three suites: $$(( $$(date +%s) - t0 )) s" | tee -a $(TIMES); \
	  if [ -n "$$fail" ]; then echo "FAILED against:$$fail"; exit 1; fi
	@$(MAKE) --no-print-directory test-cluster
	@echo "figures:"; cat $(FIGURES) 2>/dev/null || echo "(none written)"
	@echo "times:"; cat $(TIMES)

## test-on BROKER=NAME: the whole suite against one broker (system, 4.0, 4.3;
## .ci/brokers env NAME says where it listens)
TIMES := $(CURDIR)/bin/test-times.txt
test-on: build
	@$(MAKE) --no-print-directory test-version BROKER=$(BROKER)

# test-version is test-on without the build: make test builds once, then
# runs it for each broker at once.
test-version:
	@echo "== the suite against RabbitMQ $(BROKER) =="
	@set -e; eval "$$(./.ci/brokers env $(BROKER))"; eval "$$(./.ci/monitoring env)"; t0=$$(date +%s); \
	  PARKINGLOT_FIGURES=$(FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags integration $(if $(filter $(BROKER),$(RACE_BROKERS)),-race) -count=1 -timeout 40m ./...; \
	  t1=$$(date +%s); \
	  PARKINGLOT_FIGURES=$(FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags 'chaos integration' -p 1 -count=1 -timeout 20m -run 'Chaos' ./...; \
	  t2=$$(date +%s); \
	  echo "RabbitMQ $(BROKER): suite $$((t1 - t0)) s, fault tests $$((t2 - t1)) s" | tee -a $(TIMES)

## test-cluster: the failover tests (build tag "cluster") on the three-node
## RabbitMQ 4.3 cluster of make cluster; one package at a time, since each
## stops nodes
test-cluster: cluster build
	@set -e; t0=$$(date +%s); \
	  PARKINGLOT_FIGURES=$(FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags 'cluster integration' -p 1 -count=1 -timeout 40m -run TestCluster ./broker/ ./retrycore/... ./ui/cli/; \
	  echo "cluster (3 × RabbitMQ 4.3): failover tests $$(( $$(date +%s) - t0 )) s" | tee -a $(TIMES)

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./...

## bench: benchmarks against the real broker (README, "Performance"), each
## alternated with its raw baseline in the same process (A B A B …, 3 rounds
## or $PARKINGLOT_BENCH_ROUNDS); one package at a time so no two benchmarks
## share the broker. Each prints a figures line (name  msgs  median msg/s
## median baseline msg/s  ratio=median (min–max, N pairs)); they are
## repeated at the end with the machine, the broker version and the load.
## BENCH_BROKER=4.3 (or 4.0, system) picks the broker (.ci/brokers env NAME);
## PARKINGLOT_BENCH_BIG=1 adds the 1M-message lines. The broker's pid
## (.ci/brokers pid) lets the benchmarks note its CPU beside the rates.
BENCH_BROKER ?= system
# BENCH_MACHINE is what a figures header says of the run, in a recipe
# with MANAGEMENT_URL set: cores, memory and the broker's version.
BENCH_MACHINE = $$(nproc) cores, $$(awk '/MemTotal/{printf "%.0f GiB", $$2/1048576}' /proc/meminfo), RabbitMQ $$(curl -s $$MANAGEMENT_URL/api/overview | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p')
BENCH_FIGURES := $(CURDIR)/bin/bench-figures.txt
bench: broker brokers build
	@rm -f $(BENCH_FIGURES)
	@echo "load before: $$(cut -d' ' -f1-3 /proc/loadavg)"
	@set -e; eval "$$(./.ci/brokers env $(BENCH_BROKER))"; \
	  PARKINGLOT_BENCH_BROKER_PID=$$(./.ci/brokers pid $(BENCH_BROKER) 2>/dev/null || true) \
	  PARKINGLOT_FIGURES=$(BENCH_FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags integration -p 1 -run '^$$' -bench . -benchtime 1x -timeout 60m ./...; \
	  echo "figures ($(BENCH_MACHINE), load after: $$(cut -d' ' -f1-3 /proc/loadavg)):"
	@cat $(BENCH_FIGURES) 2>/dev/null || echo "(none written)"

## bench-cluster: the replay and the daemon happy-path benchmarks (README,
## "Performance") on quorum queues replicated over the three nodes of make
## cluster (PARKINGLOT_BENCH_QUEUE_TYPE=quorum: the parking lot, the origin,
## the shovel's destination and the main queue, shared by the measured runs
## and their baselines); the clients connect to node 1 (.ci/brokers env
## cluster-1). PARKINGLOT_BENCH_N and PARKINGLOT_BENCH_ROUNDS as for bench.
BENCH_CLUSTER_FIGURES := $(CURDIR)/bin/bench-cluster-figures.txt
.PHONY: bench-cluster
bench-cluster: cluster build
	@rm -f $(BENCH_CLUSTER_FIGURES)
	@echo "load before: $$(cut -d' ' -f1-3 /proc/loadavg)"
	@set -e; eval "$$(./.ci/brokers env cluster-1)"; \
	  PARKINGLOT_BENCH_QUEUE_TYPE=quorum PARKINGLOT_FIGURES=$(BENCH_CLUSTER_FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags integration -p 1 -run '^$$' -bench '^Benchmark(Replay|DaemonHappyPath)$$' -benchtime 1x -timeout 60m ./replay/ ./retrycore/daemon/; \
	  echo "figures ($(BENCH_MACHINE), $$(curl -s $$MANAGEMENT_URL/api/nodes | grep -o '"running":true' | wc -l) nodes running, clients on $${AMQP_URL#*@}, load after: $$(cut -d' ' -f1-3 /proc/loadavg)):"
	@cat $(BENCH_CLUSTER_FIGURES) 2>/dev/null || echo "(none written)"

## bench-split: the replay benchmark in the shape of production, where the
## broker has its own cores and the client runs on another machine (README,
## "Performance"): every thread of BENCH_BROKER's VM is pinned to the first
## half of the cores with as many schedulers online, the benchmark to the
## other half; both are given back on exit. PARKINGLOT_BENCH_N and
## PARKINGLOT_BENCH_ROUNDS as for bench.
BENCH_SPLIT_FIGURES := $(CURDIR)/bin/bench-split-figures.txt
.PHONY: bench-split
bench-split: broker brokers build
	@rm -f $(BENCH_SPLIT_FIGURES)
	@set -e; eval "$$(./.ci/brokers env $(BENCH_BROKER))"; \
	  n=$$(nproc); [ $$n -ge 2 ] || { echo "bench-split: needs 2 cores or more, this machine has $$n" >&2; exit 1; }; \
	  h=$$((n / 2)); pid=$$(./.ci/brokers pid $(BENCH_BROKER)); \
	  mask=$$(taskset -p $$pid | awk '{print $$NF}'); sched=$$($$PARKINGLOT_RABBITMQCTL eval 'erlang:system_info(schedulers_online).'); \
	  trap 'taskset -a -p $$mask $$pid >/dev/null; $$PARKINGLOT_RABBITMQCTL eval "erlang:system_flag(schedulers_online, $$sched)." >/dev/null' EXIT; trap 'exit 130' INT TERM; \
	  taskset -a -p -c 0-$$((h - 1)) $$pid >/dev/null; $$PARKINGLOT_RABBITMQCTL eval "erlang:system_flag(schedulers_online, $$h)." >/dev/null; \
	  echo "broker $$pid on cores 0-$$((h - 1)) ($$h scheduler(s) online), benchmark on cores $$h-$$((n - 1)); load before: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  PARKINGLOT_BENCH_CORES="broker $$h core(s), client $$((n - h))" PARKINGLOT_BENCH_BROKER_PID=$$pid PARKINGLOT_FIGURES=$(BENCH_SPLIT_FIGURES) \
	    taskset -c $$h-$$((n - 1)) $(GO) test -tags integration -p 1 -run '^$$' -bench '^BenchmarkReplay$$' -benchtime 1x -timeout 60m ./replay/; \
	  echo "figures ($(BENCH_MACHINE), load after: $$(cut -d' ' -f1-3 /proc/loadavg)):"
	@cat $(BENCH_SPLIT_FIGURES) 2>/dev/null || echo "(none written)"

## fuzz: each fuzz target for a bounded time
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./retrycore -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 3s
	$(GO) test ./broker -run '^$$' -fuzz '^FuzzMessageJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 3s
	$(GO) test ./retrycore -run '^$$' -fuzz '^FuzzGroupKey$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 3s
	$(GO) test ./replay -run '^$$' -fuzz '^FuzzAuditLine$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 3s

## chaos: only the fault-injection runs (kill -9, forced closes, broker restart)
## (BROKER=4.0 or 4.3 for another broker)
BROKER ?= system
chaos: broker brokers build
	@rm -f $(FIGURES)
	@set -e; eval "$$(./.ci/brokers env $(BROKER))"; \
	  PARKINGLOT_FIGURES=$(FIGURES) PARKINGLOT_BIN=$(CURDIR)/$(BIN) $(GO) test -tags 'chaos integration' -p 1 -count=1 -timeout 30m -run 'Chaos' ./...
	@echo "figures:"; cat $(FIGURES) 2>/dev/null || echo "(none written)"

## demo: local broker, a demo pipeline filled through the daemon, the TUI on its parking lot
demo: broker build
	./$(BIN) demo

completions: build
	./$(BIN) completion bash > bin/parkinglot.bash

clean:
	rm -rf bin
