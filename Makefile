# clang-astra: set-up and everyday targets.
#   make demo    install what is missing, build, optimize the bundled kernels
#   make check   install what is missing, build, run every test
#                but the long corpus check (make corpus-check)
#   make dist    portable tarball (static binary, clang resource headers, kernels)
BUILD_DIR    ?= build
PORTABLE_DIR ?= build-portable
DIST_DIR     ?= dist
JOBS         ?= $(shell nproc)
CMAKE        ?= cmake
VERSION      := $(shell grep -o 'clang-astra VERSION [0-9.]*' CMakeLists.txt | cut -d' ' -f3)
TARBALL      := $(DIST_DIR)/clang-astra-$(VERSION)-linux-x86_64.tar.xz
ASTRA        := $(BUILD_DIR)/bin/clang-astra

.PHONY: all deps configure build check corpus-check demo dist clean

all: build

deps:
	@scripts/ensure-deps.sh

# Configure once; later runs let ninja re-run CMake only when a CMake file
# changed, so a second `make check` rebuilds nothing that is current.
$(BUILD_DIR)/build.ninja:
	$(CMAKE) -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

# The corpus check (test/corpus) parses and compiles every file of the
# developers' corpus of third-party code, which takes longer than CI allows:
# `make corpus-check` runs it.
check: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 1800 -LE corpus

corpus-check: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L corpus

demo: build
	@scripts/demo.sh $(ASTRA)

# Any prefix but /: GNUInstallDirs puts the man page under usr/share for /.
# make-dist.sh installs into its staging folder with --prefix / anyway, so
# the tarball holds bin/, lib/ and share/.
$(PORTABLE_DIR)/build.ninja:
	$(CMAKE) -S . -B $(PORTABLE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DASTRA_PORTABLE=ON -DASTRA_BUILD_TESTS=OFF \
	  -DCMAKE_INSTALL_PREFIX=/opt/clang-astra

dist: deps $(PORTABLE_DIR)/build.ninja
	ninja -C $(PORTABLE_DIR) -j $(JOBS)
	@scripts/make-dist.sh $(PORTABLE_DIR) $(TARBALL)

clean:
	rm -rf $(BUILD_DIR) $(PORTABLE_DIR) $(DIST_DIR)
