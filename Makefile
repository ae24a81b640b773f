# asyncsolve — build, test and demo on a fresh Debian 12 machine.
#   make demo           install what is missing, build, solve the plume problem on 4 ranks
#   make test           install what is missing, build, run every test (ctest)
#   make test-sanitize  the same tests built with -fsanitize=address,undefined
#   make bench          microbenchmarks (JSON under results/bench/)
#   make peers          CG/PCG beside PETSc and hypre (installs petsc-dev, libhypre-dev)
#   make install PREFIX=/usr/local
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

BUILD      ?= build
SAN_BUILD  ?= build-sanitize
TSAN_BUILD ?= build-tsan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_RANKS ?= 4

# Debian packages the build, tests and benchmarks need.
DEB_PACKAGES := g++ make cmake ninja-build pkg-config git openmpi-bin libopenmpi-dev \
                libgtest-dev libcli11-dev nlohmann-json3-dev libfmt-dev libopenblas-dev \
                python3 python3-venv

# Open MPI as root, oversubscribed on small machines (see README).
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_mpi_yield_when_idle := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

CMAKE_FLAGS ?=

.PHONY: all deps build test test-sanitize test-tsan demo bench peers install clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "asyncsolve: installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing > /dev/null; \
	fi

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

$(SAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DASYNCSOLVE_SANITIZE=address,undefined -DASYNCSOLVE_BUILD_BENCH=OFF $(CMAKE_FLAGS)

# Open MPI's own allocations show as leaks, hence detect_leaks=0 (set by the tests).
test-sanitize: deps $(SAN_BUILD)/build.ninja
	cmake --build $(SAN_BUILD) -j $(JOBS)
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS)

$(TSAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DASYNCSOLVE_SANITIZE=thread -DASYNCSOLVE_BUILD_BENCH=OFF $(CMAKE_FLAGS)

# ThreadSanitizer build of the library and tests (for the threaded solvers).
test-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L unit

demo: build
	mpiexec -n $(DEMO_RANKS) $(BUILD)/asyncsolve solve --problem plume --local 50,50,50 \
	        --monitor --monitor-every 0.2 --json results/demo/plume-sync.json
	@echo "result document: results/demo/plume-sync.json"

demo bench: | results-dirs
.PHONY: results-dirs
results-dirs:
	@mkdir -p results/demo results/bench

bench: build
	$(BUILD)/bench/jacobi_sweep --json results/bench/jacobi_sweep.json

peers: build
	python3 bench/peers/run_peers.py --asyncsolve $(BUILD)/asyncsolve --json results/peers/peers.json

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) build-peers
