# gpudays — top-level entry points. `make run` and `make test` install what they need, build and run.
# The CMake build lives in build/; CMake options can be passed with CMAKE_ARGS="...".
# LibTorch (PyPI torch==2.11.0) goes into the project venv .venv; WITH_TORCH=OFF builds without it.
# `make test` also compiles the CUDA variant into build-cuda/ (WITH_CUDA_BUILD=OFF skips it),
# runs the GPU check's dry run against it (gpu-check-dry), the fuzz targets for FUZZ_SECONDS each
# (WITH_FUZZ=OFF skips them; docs/testing.md), checks the documented example outputs (docs-check)
# and that every C++ file is formatted (format-check).

BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
JOBS ?= $(shell nproc)
WITH_TORCH ?= ON
WITH_CUDA_BUILD ?= ON
TORCH_PYTHON ?= python3
WITH_FUZZ ?= ON
FUZZ_SECONDS ?= 7
PREFIX ?= $(HOME)/.local

.PHONY: all deps torch torch-ref torch-ref4 fixtures configure build build-gpudays test test-cuda docs-check \
        run cuda clean format format-check fuzz fuzz-build test-asan gpu-check-dry install dist

all: build

deps:
	@bash scripts/install-deps.sh

# LibTorch for the C++ build: the torch wheel without its Python dependencies (stamped, quick).
torch:
ifeq ($(WITH_TORCH),ON)
	@bash scripts/install-torch.sh cpp .venv
endif

# The reference for the parity tests: full torch, transformers, safetensors (same venv).
torch-ref: torch
ifeq ($(WITH_TORCH),ON)
	@bash scripts/install-torch.sh ref .venv
endif

configure: deps torch
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DGPUDAYS_WITH_TORCH=$(WITH_TORCH) -DGPUDAYS_WERROR=ON $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The gpudays binary alone (what `make run` runs), not the tests.
build-gpudays: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target gpudays

# transformers 4.42 beside 5 (the reference benchmark's pin), for the transformers 4 export test.
torch-ref4: torch-ref
ifeq ($(WITH_TORCH),ON)
	@bash scripts/install-torch.sh ref4 .venv
endif

# Parity fixtures from transformers (tests/models/make_fixtures.py), remade when their inputs change.
fixtures: build torch-ref torch-ref4
ifeq ($(WITH_TORCH),ON)
	@cmake --build $(BUILD_DIR) --target gpudays_fixtures
endif

# A failure is run once more on its own, so that its output ends the log and shows whether it
# fails alone too; `make test` fails either way.
test: build fixtures
	@cd $(BUILD_DIR) && { ctest --output-on-failure -j $(JOBS) || { \
	  echo "== the failed tests once more, alone:"; ctest --rerun-failed --output-on-failure; \
	  exit 1; }; }
ifeq ($(WITH_TORCH)$(WITH_CUDA_BUILD),ONON)
	@$(MAKE) --no-print-directory test-cuda
	@$(MAKE) --no-print-directory gpu-check-dry
endif
	@$(if $(filter ON,$(WITH_FUZZ)),$(MAKE) --no-print-directory fuzz,:)
	@$(MAKE) --no-print-directory docs-check
	@bash scripts/format-check.sh

# The CUDA variant against the venv's torch (the full wheel of `make torch-ref` is a CUDA build),
# so that no change breaks the GPU path unseen: every target compiles and links, and the GPU tests
# (*_CUDA) run, skipping themselves without a GPU. The CPU tests are the ones above.
test-cuda: torch-ref
	@$(MAKE) --no-print-directory cuda TORCH_PYTHON=$(CURDIR)/.venv/bin/python3
	@build-cuda/tests/models/gpudays_torch_tests --gtest_filter='*_CUDA' --gtest_brief=1
	@bash scripts/install-check.sh build-cuda

# The GPU check (scripts/gpu-check.sh) without a GPU, against the CUDA variant test-cuda built in
# build-cuda/ (not rebuilt; GPU stages skipped even where a GPU is): it parses, finds its binaries,
# checks every one with ldd and loads them, plans and writes out/gpu-check-dry/report.md. Fails when
# a binary misses a library or the tree and .carry/ outgrow what the device tool carries. Seconds.
gpu-check-dry:
	@OUT=$(CURDIR)/out/gpu-check-dry GPU_CHECK_SKIP_BUILD=1 GPU_CHECK_BUILD_DIR=build-cuda \
	  GPU_CHECK_DRY=1 $(if $(wildcard .venv/bin/python3),GPUDAYS_PYTHON=$(CURDIR)/.venv/bin/python3) \
	  bash scripts/gpu-check.sh

# The fuzz targets (tests/fuzz: libFuzzer, clang, ASan and UBSan) in build-fuzz/, each run for
# FUZZ_SECONDS from a copy of its seed corpus; a crash fails and names the saved input.
fuzz-build: deps torch
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGPUDAYS_FUZZ=ON \
	  -DGPUDAYS_WITH_TORCH=$(WITH_TORCH) >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target gpudays_fuzzers

fuzz: fuzz-build
	@bash scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

# The unit suite under AddressSanitizer and UndefinedBehaviorSanitizer (undefined behaviour aborts)
# in build-asan/, Debug at -O1; not part of `make test`. Its cost (docs/testing.md): about 20 min
# cold on 2 idle cores, 5.5 min with WITH_TORCH=OFF (the torch-free suite).
# LibTorch, OpenMP and CpuMemoryScope's counters (freed never, on purpose) live until exit: leaks
# are checked in the torch-free suite alone.
test-asan: ASAN_LEAKS = $(if $(filter ON,$(WITH_TORCH)),ASAN_OPTIONS=detect_leaks=0,)
test-asan: deps torch-ref
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DGPUDAYS_SANITIZE=ON -DGPUDAYS_WITH_TORCH=$(WITH_TORCH) $(CMAKE_ARGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
ifeq ($(WITH_TORCH),ON)
	@cmake --build build-asan --target gpudays_fixtures
endif
	@cd build-asan && UBSAN_OPTIONS=print_stacktrace=1 $(ASAN_LEAKS) ctest --output-on-failure -j $(JOBS)

# The main job: a short benchmark of a small model on what this machine has (the CPU here; results
# in out/gpudays.db) and its best-settings row, then the plans for pythia-1b on 4 x A100 and on
# 8 x RTX 3090.
run: build-gpudays
	@mkdir -p out
	OMP_NUM_THREADS=1 $(BUILD_DIR)/gpudays bench --model-file tests/data/bench-gpt-neox.toml \
	  --device cpu --methods free-lunch --memory-limit 134217728 --db out/gpudays.db
	$(BUILD_DIR)/gpudays best --model bench-gpt-neox --gpu cpu --db out/gpudays.db
	$(BUILD_DIR)/gpudays plan --model pythia-1b --gpu a100-80gb-sxm --gpus-per-node 4
	$(BUILD_DIR)/gpudays plan --model pythia-1b --gpu rtx-3090 --gpus-per-node 8

# Installs gpudays, its catalog and (CPU build) the libraries it loads under PREFIX (default
# ~/.local): bin/gpudays, share/gpudays, lib/gpudays, share/doc/gpudays (docs/install.md). The CUDA
# variant installs the same way from build-cuda/: make install BUILD_DIR=build-cuda.
install: build-gpudays
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX) >/dev/null
	@echo "installed $(PREFIX)/bin/gpudays; $$($(PREFIX)/bin/gpudays --version)"

# A relocatable tarball of the install (the CPU build): $(BUILD_DIR)/gpudays-VERSION-linux-ARCH.tar.gz,
# unpacked anywhere, runs bin/gpudays with nothing else installed but the C library.
dist: build-gpudays
	@bash scripts/make-dist.sh $(BUILD_DIR)

# The documented example outputs (marked `<!-- docs-check: COMMAND -->` in README.md and docs/)
# against what the commands print now: a unified diff and exit 1 on a mismatch (scripts/docs-check.py).
docs-check: build-gpudays
	@python3 scripts/docs-check.py --build-dir $(BUILD_DIR)

# CUDA variant against an installed CUDA torch (TORCH_PYTHON's `import torch`; downloads nothing),
# e.g. on the GPU machine: make cuda TORCH_PYTHON=/opt/torch/.venv/bin/python3 (where our Debian
# packages are missing, scripts/gpu-check.sh configures it from .carry/: scripts/prepare-carry.sh).
cuda:
	@cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUDAYS_WITH_TORCH=ON \
	  -DGPUDAYS_CUDA=ON -DGPUDAYS_WERROR=ON -DGPUDAYS_PYTHON=$(TORCH_PYTHON) $(CMAKE_ARGS) >/dev/null
	@cmake --build build-cuda -j $(JOBS)

format: deps
	@clang-format -i $$(git ls-files '*.cpp' '*.h')

# Changes nothing: lists the files `make format` would change (scripts/format-check.sh).
format-check: deps
	@bash scripts/format-check.sh

clean:
	rm -rf $(BUILD_DIR) build-cuda build-fuzz build-asan
