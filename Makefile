# gpudays — top-level entry points. `make run` and `make test` install what they need, build and run.
# The CMake build lives in build/; CMake options can be passed with CMAKE_ARGS="...".

BUILD_DIR ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test run clean format

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The main job: plan pythia-1b on 4 x A100 and on 8 x RTX 3090.
run: build
	$(BUILD_DIR)/gpudays plan --model pythia-1b --gpu a100-80gb-sxm --gpus-per-node 4
	$(BUILD_DIR)/gpudays plan --model pythia-1b --gpu rtx-3090 --gpus-per-node 8

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD_DIR)
