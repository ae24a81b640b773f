# asyncsolve — build, test and demo on a fresh Debian 12 machine.
#   make demo           install what is missing (apt, .venv), build, run suites/demo.toml
#                       with asyncsolve-lab and write its report (results/demo/report/)
#   make test           install what is missing, build, run every test (ctest, with the
#                       lab's pytest suite in the venv)
#   make build          the Release build (build/): the library, the command, the tests and
#                       the asyncsolve Python package (build/python, on the venv's path)
#   make venv           the Python venv (.venv): asyncsolve-lab and the pinned dependencies
#                       of the lab and the asyncsolve package
#   make lint           lint-format, lint-tidy-changed, lint-python and lint-size (what CI runs)
#   make lint-format    clang-format (.clang-format) check of every C and C++ file
#   make lint-tidy      clang-tidy (.clang-tidy) on the library's sources (src/)
#   make lint-tidy-changed  the same on the units changed since .ci/tidy-baseline
#   make lint-tidy-baseline the full lint-tidy, then the baseline moved to HEAD
#   make lint-python    ruff (ruff.toml) over python/, bench/ and tests/, from the venv
#   make lint-size      src/: files at most 600 lines, functions at most 150 (lizard, from
#                       the venv), at most 15 lines comparing text with == or != (parsers)
#   make test-sanitize  the same tests built with -fsanitize=address,undefined
#   make test-tsan-omp  OpenMP Jacobi and the hybrid schemes under ThreadSanitizer (clang 14, libomp, Archer)
#   make bench          microbenchmarks (JSON under results/bench/)
#   make peers          CG/PCG beside PETSc and hypre (installs petsc-dev, libhypre-dev)
#   make sim            the simulation build (installs libsimgrid-dev; smpicxx, build-sim/)
#   make test-sim       its tests: simulated runs under smpirun, deterministic replay
#   make fuzz           the Matrix Market reader under libFuzzer for FUZZ_SECONDS (600; clang-14)
#   make docs           the documentation site (docs/: Sphinx with MyST-Parser from the venv,
#                       Doxygen and Breathe for the channel API) in build/docs/html; any
#                       warning or broken internal link fails it
#   make docs-options   regenerate docs/options.md's option table from build/asyncsolve --options-table
#   make install PREFIX=/usr/local
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

BUILD      ?= build
SAN_BUILD  ?= build-sanitize
TSAN_BUILD ?= build-tsan
TSAN_OMP_BUILD ?= build-tsan-omp
SIM_BUILD  ?= build-sim
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# ctest's slots: twice the cores. Most MPI tests wait more than they compute
# (oversubscribed ranks yield), so the cores stay busy only with more tests
# in flight; a test's PROCESSORS property still caps what runs beside it.
CTEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
VENV       ?= .venv
PYTHON     ?= python3
DEMO_SUITE ?= suites/demo.toml

# Debian packages the build, tests and benchmarks need.
DEB_PACKAGES := g++ make cmake ninja-build pkg-config git openmpi-bin libopenmpi-dev \
                libgtest-dev libcli11-dev nlohmann-json3-dev libfmt-dev libopenblas-dev liblapack-dev \
                libmetis-dev libscotch-dev libhypre-dev libsuitesparse-dev python3 python3-venv python3-dev \
                gfortran libcoarrays-openmpi-dev python3-petsc4py
# (gfortran: the Fortran module asyncsolve_channel, its example and tests;
# libcoarrays-openmpi-dev: OpenCoarrays over Open MPI, caf and cafrun, for
# asyncsolve-stencil2d-caf. Without them the build leaves both out and the
# tests say they were skipped. python3-petsc4py: PETSc's KSPGMRES and KSPBCGS
# iteration counts, which tests/sparse/test_nonsymmetric.py compares with.)

# Only for test-tsan-omp: GCC's libgomp gives ThreadSanitizer false positives
# at region joins, LLVM's libomp comes with Archer, which tells it OpenMP's
# synchronisation.
TSAN_OMP_PACKAGES := clang-14 libomp-14-dev

# Only for the simulation build: SimGrid's SMPI (smpicxx, smpirun).
SIM_PACKAGES := libsimgrid-dev

# Only for the documentation: Doxygen, whose XML of the public channel
# headers Breathe turns into docs/api.md's reference.
DOCS_PACKAGES := doxygen

# Only for make docs-check: Debian's Chromium, run headless on built pages.
DOCS_CHECK_PACKAGES := chromium

# Only for lint: Debian 12's clang-format and clang-tidy (LLVM 14), and LLVM's
# omp.h, without which clang-tidy cannot parse the OpenMP sources (GCC's omp.h
# is not on clang's include path).
LINT_PACKAGES := clang-format-14 clang-tidy-14 libomp-14-dev

# Open MPI as root, oversubscribed on small machines (docs/running.md).
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_mpi_yield_when_idle := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

CMAKE_FLAGS ?=

.PHONY: deps-mpich venv-mpich test-mpich fuzz all deps deps-docs deps-tsan-omp deps-lint deps-sim deps-docs-check docs-check sim test-sim build venv lint lint-format lint-tidy lint-tidy-changed lint-tidy-baseline lint-python lint-size test test-sanitize test-tsan test-tsan-omp demo docs docs-options \
        bench peers install clean

all: build

# The Debian packages of the list named $(1) that are not installed yet,
# installed with apt-get (as root, or through sudo).
define install_missing
	@missing=""; \
	for p in $($(1)); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "asyncsolve: installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing > /dev/null; \
	fi
endef

deps:
	$(call install_missing,DEB_PACKAGES)

deps-lint:
	$(call install_missing,LINT_PACKAGES)

deps-docs:
	$(call install_missing,DOCS_PACKAGES)

deps-docs-check:
	$(call install_missing,DOCS_CHECK_PACKAGES)

deps-sim:
	$(call install_missing,SIM_PACKAGES)

deps-tsan-omp:
	$(call install_missing,TSAN_OMP_PACKAGES)

# The Release build, with the Python package's extension module built by the
# venv's Python (nanobind and mpi4py from the lock file) and the package
# assembled in $(BUILD)/python; a .pth file puts it on the venv's path, so
# that `.venv/bin/python -c "import asyncsolve"` imports this build's.
# CMAKE_FLAGS=-DASYNCSOLVE_PYTHON=OFF leaves it out.
$(BUILD)/build.ninja: | deps venv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	      -DASYNCSOLVE_PYTHON=ON -DPython_EXECUTABLE=$(CURDIR)/$(VENV)/bin/python $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	@if [ -d $(BUILD)/python/asyncsolve ]; then $(VENV)/bin/python -c \
	  "import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'asyncsolve-build.pth').write_text('$(CURDIR)/$(BUILD)/python\n')"; fi

# asyncsolve-lab (python/) in a venv: every dependency pinned
# (python/requirements.lock; mpi4py built from source against the system
# MPI, so that it and the asyncsolve package link the same MPI library, which
# the package checks at import), the lab installed editable. The asyncsolve
# package itself comes with `make build` (above); elsewhere,
# `pip install ./python/bindings` builds it with scikit-build-core.
venv: $(VENV)/.lab-installed
$(VENV)/.lab-installed: python/pyproject.toml python/requirements.lock | deps
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --no-binary mpi4py -r python/requirements.lock
	$(VENV)/bin/pip install -q --no-deps --no-build-isolation -e ./python
	touch $@

# Every Python file of the repository: the lab, the benchmark drivers and the
# tests, with the rules of ruff.toml and the ruff pinned in the lock file.
# (ruff format is not adopted: see ruff.toml.)
PY_LINT_PATHS := python bench tests docs/_ext
lint-python: venv
	$(VENV)/bin/ruff check $(PY_LINT_PATHS)

# Every C and C++ file git tracks, formatted as .clang-format says.
lint-format: deps-lint
	git ls-files -z '*.c' '*.h' '*.cpp' '*.hpp' | xargs -0 clang-format-14 --dry-run --Werror

# clang-tidy with the repository's .clang-tidy on every translation unit of
# the library (src/) and the headers they include from include/asyncsolve
# (HeaderFilterRegex), any finding an error (WarningsAsErrors). Needs the
# compile commands of the Release build. A header's finding is listed once
# per layer include tree that shows it (build/layers/<layer>/asyncsolve/).
TIDY_FINDINGS = { sed 's/\x1b\[[0-9;]*m//g' $(BUILD)/clang-tidy.log | grep -E 'warning:|error:' | sort -u || \
	      tail -n 20 $(BUILD)/clang-tidy.log; \
	    echo "lint-tidy: findings above (full log: $(BUILD)/clang-tidy.log)"; exit 1; }
lint-tidy: deps-lint build
	run-clang-tidy-14 -p $(BUILD) -j $(JOBS) -quiet \
	  '^$(CURDIR)/src/.*\.(c|cpp)$$' > $(BUILD)/clang-tidy.log 2>&1 || $(TIDY_FINDINGS)

# The same, on the units that changed since the last commit whose whole tree
# passed (.ci/tidy-baseline; .ci/tidy-changed says how a change is found and
# when it checks every unit instead): what make lint and CI run. A unit none
# of whose files changed has the findings it had then, none; checking it
# again took about 14 of CI's 60 minutes.
lint-tidy-changed: deps-lint build
	.ci/tidy-changed $(BUILD) $(JOBS) $(BUILD)/clang-tidy.log || $(TIDY_FINDINGS)

# Moves the baseline to HEAD once the whole tree passes (commit the change
# to .ci/tidy-baseline afterwards). Refused with uncommitted changes to what
# clang-tidy reads.
lint-tidy-baseline:
	@git diff --quiet HEAD -- src include CMakeLists.txt cmake .clang-tidy || \
	  { echo "lint-tidy-baseline: commit the changes to src, include and the build first"; exit 1; }
	$(MAKE) lint-tidy
	sed -i "s/^commit .*/commit $$(git rev-parse HEAD)/; s/^clang-tidy .*/clang-tidy $$(clang-tidy-14 --version | grep -o 'version [0-9.]*' | cut -d' ' -f2)/" .ci/tidy-baseline
	@echo "lint-tidy-baseline: .ci/tidy-baseline now names $$(git rev-parse --short HEAD); commit it"

# The library's size limits, so that no file or function grows past what a
# reader takes in: every C/C++ file under src/ at most SRC_MAX_FILE_LINES
# lines; every function at most SRC_MAX_FUNCTION_LINES lines from its first
# to its last line (lizard's length, comments included: -L; the complexity
# and argument warnings are set out of reach); and at most
# SRC_MAX_TEXT_COMPARES lines that compare text with a string literal
# (== or != "..."): past the parsers (the Matrix Market banner, an
# environment variable), names are enums.
SRC_MAX_FILE_LINES ?= 600
SRC_MAX_FUNCTION_LINES ?= 150
SRC_MAX_TEXT_COMPARES ?= 15
lint-size: venv
	@long=$$(git ls-files -z 'src/*.c' 'src/*.h' 'src/*.cpp' 'src/*.hpp' | xargs -0 wc -l | \
	  awk -v max=$(SRC_MAX_FILE_LINES) '$$2 != "total" && $$1 > max {print "  " $$2 ": " $$1 " lines"}'); \
	if [ -n "$$long" ]; then echo "lint-size: files over $(SRC_MAX_FILE_LINES) lines:"; \
	  echo "$$long"; exit 1; fi
	git ls-files -z 'src/*.c' 'src/*.h' 'src/*.cpp' 'src/*.hpp' | \
	  xargs -0 $(VENV)/bin/lizard -l cpp -w -L $(SRC_MAX_FUNCTION_LINES) -C 100000 -a 1000 || \
	  { echo "lint-size: functions over $(SRC_MAX_FUNCTION_LINES) lines above"; exit 1; }
	@compares=$$(grep -rnE '(==|!=) *"[a-z]' src | wc -l); \
	if [ "$$compares" -gt $(SRC_MAX_TEXT_COMPARES) ]; then \
	  grep -rnE '(==|!=) *"[a-z]' src; \
	  echo "lint-size: $$compares lines compare text, expected at most $(SRC_MAX_TEXT_COMPARES)"; \
	  exit 1; fi; \
	echo "lint-size: files <= $(SRC_MAX_FILE_LINES) lines, functions <= $(SRC_MAX_FUNCTION_LINES), $$compares text compares (<= $(SRC_MAX_TEXT_COMPARES))"

lint: lint-format lint-tidy-changed lint-python lint-size

test: build venv
	ctest --test-dir $(BUILD) --output-on-failure -j $(CTEST_JOBS)

# The sanitizer build: the library, the command, and the tests of memory
# and concurrency (unit, MPI, OpenSHMEM, the command line's main test). Left
# to the Release build (make test): the examples and the Fortran module
# (thin layers over the C channel API that the MPI tests cover), the long
# timing paths of the command line (the Stencil2D and Lanczos benchmarks,
# the peers' harness), and what tests/CMakeLists.txt registers only without
# sanitizers (the scipy comparisons, the lab, bad input, install, fuzz).
# -O1 -g1, as AddressSanitizer's documentation suggests for usable speed: line
# tables only keep the reports' files and lines (a third less build time than
# full debug information), and -O1 compiles about 35% faster than -O2 under
# the sanitizers (solve_options.cpp 22 s against 34, test_sparse.cpp 15.6
# against 25.2, schwarz.cpp 7.5 against 11.9; gcc 12, this machine).
SAN_SKIP_TESTS ?= ^(cli_stencil2d|cli_lanczos|bench_peers)$$
$(SAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG' '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG' \
	      -DASYNCSOLVE_SANITIZE=address,undefined -DASYNCSOLVE_BUILD_BENCH=OFF \
	      -DASYNCSOLVE_BUILD_EXAMPLES=OFF -DASYNCSOLVE_FORTRAN=OFF -DASYNCSOLVE_CAF=OFF $(CMAKE_FLAGS)

# Open MPI's own allocations show as leaks, hence detect_leaks=0 (set by the tests).
test-sanitize: deps $(SAN_BUILD)/build.ninja
	cmake --build $(SAN_BUILD) -j $(JOBS)
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(CTEST_JOBS) -E '$(SAN_SKIP_TESTS)'

# The library, the command and the tests labelled unit, mpi, cli, example
# and fortran against Debian's MPICH (mpich, libmpich-dev; Open MPI stays the
# default through the alternatives), in their own build folder. hypre,
# OpenSHMEM and the coarrays are Debian's builds over Open MPI and stay off;
# the Python suites check the command's arithmetic, which the MPI does not
# change. The tests run on 1-4 ranks with MPICH's launcher, their timeouts
# x4 (Hydra's ranks poll without yielding on oversubscribed cores: Debian's
# MPICH is ch4:ucx, which has no yield setting), one test at a time (two
# tests' spinning ranks, beside two compilers on 2 cores, made a 1-second
# test take 9 minutes); then the Python package's tests (python_api on 1-4
# ranks and the scikit-fem example) with the extension module built against
# MPICH and a venv of its own (.venv-mpich, mpi4py compiled with mpicc.mpich:
# one process cannot load both MPIs); then 100
# asynchronous solves over mpi and rma (bench/soak.sh, 0 failures expected).
# Not part of .ci/run (its budget): run it before a release and after any
# change to a transport or a collective.
MPICH_BUILD    ?= build-mpich
MPICH_PACKAGES := mpich libmpich-dev
MPICH_SOAK     ?= 100
VENV_MPICH     ?= .venv-mpich
deps-mpich:
	$(call install_missing,MPICH_PACKAGES)

# The MPICH venv: mpi4py built from source with mpicc.mpich (never from pip's
# wheel cache, which holds the Open MPI build of .venv), then the same pins
# as .venv; it refuses to finish if mpi4py reports another MPI.
venv-mpich: $(VENV_MPICH)/.installed
$(VENV_MPICH)/.installed: python/pyproject.toml python/requirements.lock | deps deps-mpich
	$(PYTHON) -m venv $(VENV_MPICH)
	MPICC=mpicc.mpich $(VENV_MPICH)/bin/pip install -q --no-cache-dir --no-binary mpi4py \
	  "$$(grep '^mpi4py==' python/requirements.lock)"
	$(VENV_MPICH)/bin/pip install -q -r python/requirements.lock
	$(VENV_MPICH)/bin/pip install -q --no-deps --no-build-isolation -e ./python
	$(VENV_MPICH)/bin/python -c "from mpi4py import MPI; v = MPI.Get_library_version(); \
	  assert 'MPICH' in v, 'mpi4py in $(VENV_MPICH) is not built against MPICH: ' + v"
	touch $@

$(MPICH_BUILD)/build.ninja: | deps deps-mpich $(VENV_MPICH)/.installed
	cmake -S . -B $(MPICH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	      -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_C_COMPILER=mpicc.mpich \
	      -DMPI_Fortran_COMPILER=mpif90.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
	      -DASYNCSOLVE_HYPRE=OFF -DASYNCSOLVE_SHMEM=OFF -DASYNCSOLVE_CAF=OFF \
	      -DASYNCSOLVE_BUILD_BENCH=OFF '-DASYNCSOLVE_TEST_RANKS=1;2;3;4' \
	      -DASYNCSOLVE_PYTHON=ON -DPython_EXECUTABLE=$(abspath $(VENV_MPICH))/bin/python \
	      -DASYNCSOLVE_LAB_PYTHON=$(abspath $(VENV_MPICH))/bin/python $(CMAKE_FLAGS)

test-mpich: venv $(MPICH_BUILD)/build.ninja
	cmake --build $(MPICH_BUILD) -j $(JOBS)
	ctest --test-dir $(MPICH_BUILD) --output-on-failure -j 1 -L '^(unit|mpi|cli|example|fortran)$$'
	ctest --test-dir $(MPICH_BUILD) --output-on-failure -j 1 -R '^python_(api\.|fem_example)'
	MPIEXEC=mpiexec.mpich TRANSPORTS="mpi rma" bench/soak.sh $(MPICH_BUILD)/asyncsolve $(MPICH_SOAK)

$(TSAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DASYNCSOLVE_SANITIZE=thread -DASYNCSOLVE_BUILD_BENCH=OFF $(CMAKE_FLAGS)

# ThreadSanitizer build of the library and tests (for the threaded solvers).
test-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L unit

# ThreadSanitizer build of OpenMP Jacobi with clang 14 and libomp (MPI found
# by CMake's FindMPI through mpicxx; OMPI_CXX points Open MPI's wrapper at
# clang). libomp loads Archer (libarcher.so) by itself when the program is
# built with -fsanitize=thread; the run checks that it did. Kernels are not
# vectorised beyond 16 bytes (no -march=native, -fno-vectorize): wider
# accesses are invisible to ThreadSanitizer. ignore_noninstrumented_modules
# keeps Open MPI's and libomp's own accesses out of the reports. Then the
# planted race (tests/omp/planted_race.cpp) must be reported.
TSAN_OMP_ENV := TSAN_OPTIONS=ignore_noninstrumented_modules=1 ARCHER_OPTIONS=verbose=1
test-tsan-omp: deps deps-tsan-omp
	@if [ ! -f $(TSAN_OMP_BUILD)/build.ninja ]; then \
	  OMPI_CC=clang-14 OMPI_CXX=clang++-14 cmake -S . -B $(TSAN_OMP_BUILD) -G Ninja \
	    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASYNCSOLVE_SANITIZE=thread -DASYNCSOLVE_NATIVE=OFF \
	    "-DCMAKE_CXX_FLAGS=-fno-vectorize -fno-slp-vectorize" \
	    -DASYNCSOLVE_BUILD_BENCH=OFF -DASYNCSOLVE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS); \
	fi
	cmake --build $(TSAN_OMP_BUILD) -j $(JOBS) --target mpi_jacobi_omp mpi_hybrid omp_planted_race asyncsolve_exe
	$(TSAN_OMP_ENV) $(TSAN_OMP_BUILD)/tests/mpi_jacobi_omp > $(TSAN_OMP_BUILD)/jacobi_omp.log 2>&1 || \
	  { cat $(TSAN_OMP_BUILD)/jacobi_omp.log; echo "test-tsan-omp: mpi_jacobi_omp failed"; exit 1; }
	@grep -q "Archer detected" $(TSAN_OMP_BUILD)/jacobi_omp.log || \
	  { echo "test-tsan-omp: libomp did not load Archer"; exit 1; }
	@! grep -q "ThreadSanitizer" $(TSAN_OMP_BUILD)/jacobi_omp.log || \
	  { cat $(TSAN_OMP_BUILD)/jacobi_omp.log; echo "test-tsan-omp: reports in the OpenMP Jacobi tests"; exit 1; }
	@for n in 1 3; do \
	  OMP_WAIT_POLICY=passive $(TSAN_OMP_ENV) mpiexec -q --oversubscribe -n $$n \
	    -x OMP_WAIT_POLICY -x TSAN_OPTIONS -x ARCHER_OPTIONS \
	    $(TSAN_OMP_BUILD)/tests/mpi_hybrid > $(TSAN_OMP_BUILD)/hybrid_$$n.log 2>&1 || \
	    { cat $(TSAN_OMP_BUILD)/hybrid_$$n.log; echo "test-tsan-omp: mpi_hybrid on $$n ranks failed"; exit 1; }; \
	  ! grep -q "ThreadSanitizer" $(TSAN_OMP_BUILD)/hybrid_$$n.log || \
	    { cat $(TSAN_OMP_BUILD)/hybrid_$$n.log; echo "test-tsan-omp: reports in the hybrid tests"; exit 1; }; \
	done
	@for v in sync async racy; do \
	  $(TSAN_OMP_ENV) $(TSAN_OMP_BUILD)/asyncsolve solve --transport omp --variant $$v --threads 3 \
	    --local 16,16,8 --tol 1e-6 > $(TSAN_OMP_BUILD)/cli_$$v.log 2>&1 || \
	    { cat $(TSAN_OMP_BUILD)/cli_$$v.log; echo "test-tsan-omp: asyncsolve $$v failed"; exit 1; }; \
	  ! grep -q "ThreadSanitizer" $(TSAN_OMP_BUILD)/cli_$$v.log || \
	    { cat $(TSAN_OMP_BUILD)/cli_$$v.log; echo "test-tsan-omp: reports in asyncsolve $$v"; exit 1; }; \
	done
	@if $(TSAN_OMP_ENV) $(TSAN_OMP_BUILD)/tests/omp_planted_race > $(TSAN_OMP_BUILD)/planted_race.log 2>&1; then \
	  echo "test-tsan-omp: the planted race exited 0: ThreadSanitizer did not report it"; exit 1; fi
	@grep -q "WARNING: ThreadSanitizer: data race" $(TSAN_OMP_BUILD)/planted_race.log || \
	  { cat $(TSAN_OMP_BUILD)/planted_race.log; echo "test-tsan-omp: planted race not reported"; exit 1; }
	@echo "test-tsan-omp: OpenMP Jacobi (sync, async, racy; 1-4 threads) and hybrid (1 and 3 ranks) clean; planted race reported"

# The demo suite (about 3 minutes on 2 busy cores, 70 s idle); rerunning skips finished runs.
# The demo's finite-element system (its Schwarz experiment): a 3-D diffusion
# with a 10^4 coefficient jump, assembled here by scikit-fem (no download).
DEMO_FEM := results/demo/fem/jump.mtx
$(DEMO_FEM): | venv
	$(VENV)/bin/python bench/fem_systems.py jump --n 24 --out $(dir $@) > /dev/null

demo: build venv $(DEMO_FEM)
	$(VENV)/bin/asyncsolve-lab run $(DEMO_SUITE) --results results/demo --binary $(BUILD)/asyncsolve
	$(VENV)/bin/asyncsolve-lab report results/demo

demo bench: | results-dirs
.PHONY: results-dirs
results-dirs:
	@mkdir -p results/demo results/bench

bench: build
	$(BUILD)/bench/jacobi_sweep --json results/bench/jacobi_sweep.json

peers: build
	python3 bench/peers/run_peers.py --asyncsolve $(BUILD)/asyncsolve --json results/peers/peers.json

# The simulation build (sim/README.md): the library and the command compiled
# with SimGrid's smpicxx, run by smpirun on the platforms of sim/, with every
# time simulated. Its tests are simulated runs of 4 to 16 ranks.
$(SIM_BUILD)/build.ninja: | deps deps-sim
	cmake -S . -B $(SIM_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DASYNCSOLVE_SIM=ON \
	      -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx $(CMAKE_FLAGS)

sim: deps deps-sim $(SIM_BUILD)/build.ninja
	cmake --build $(SIM_BUILD) -j $(JOBS)

test-sim: sim
	ctest --test-dir $(SIM_BUILD) --output-on-failure -j $(JOBS)

# The reader's fuzz target (tests/fuzz): clang with libFuzzer, ASan and UBSan.
FUZZ_SECONDS ?= 600
fuzz:
	@command -v clang++-14 > /dev/null || { sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq clang-14 libclang-rt-14-dev libfmt-dev > /dev/null; }
	tests/fuzz/run.sh --seconds $(FUZZ_SECONDS) --build build-fuzz

# The documentation site: the Markdown pages of docs/ (docs/conf.py says why
# Sphinx with MyST-Parser) built with the venv's pinned Sphinx into
# $(BUILD)/docs/html; the channel API page (docs/api.md) from Doxygen's XML
# of the public channel headers, through Breathe. -W --keep-going -n: every
# warning, a broken internal link or #section anchor among them, fails the
# build after all are listed.
DOCS_OUT := $(BUILD)/docs
docs: venv deps-docs
	mkdir -p $(DOCS_OUT)/doxygen
	{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $(DOCS_OUT)/doxygen"; } | doxygen -
	ASYNCSOLVE_DOXYGEN_XML=$(abspath $(DOCS_OUT))/doxygen/xml \
	  $(VENV)/bin/sphinx-build -q -W --keep-going -n -b html -d $(DOCS_OUT)/doctrees docs $(DOCS_OUT)/html
	@echo "asyncsolve: documentation in $(DOCS_OUT)/html/index.html"

# The site as a browser shows it: headless Chromium screenshots three pages
# (home, your own matrix, performance) into $(DOCS_OUT)/screens and reads
# back the DOM it built; each page must show its title and a table
# (tests/docs/check_rendered.py).
docs-check: docs deps-docs-check
	$(VENV)/bin/python tests/docs/check_rendered.py $(DOCS_OUT)/html $(DOCS_OUT)/screens

# docs/options.md's table is `asyncsolve --options-table`, spliced between
# its BEGIN generated and END generated lines (tests/unit/test_option_table.cpp
# fails when the two differ).
docs-options: build
	{ sed '/^<!-- BEGIN generated/q' docs/options.md; $(BUILD)/asyncsolve --options-table; \
	  sed -n '/^<!-- END generated/,$$p' docs/options.md; } > docs/options.md.new
	mv docs/options.md.new docs/options.md

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build-fuzz $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) $(TSAN_OMP_BUILD) $(SIM_BUILD) build-peers $(VENV)
