# lutorch — GNU make build.
#   make          build/lutorch, build/liblutorch.{a,so}, build/torch.so
#   make run      install missing packages, build, start lutorch
#   make test     install missing packages, build, run every test
#   make asan     the test suite under AddressSanitizer + UBSan
#   make bench    benchmarks side by side with PyTorch (by hand; see bench/README.md)
#   make deps     install missing Debian packages (no-op when all are present)

BUILD ?= build
CC ?= gcc
# the target CPU: a baseline any x86-64 PC of the last fifteen years runs (x86-64-v2: SSE4.2,
# POPCNT), so a binary built here runs on another machine; the hot CPU kernels are compiled
# again for AVX2 and AVX-512 and picked at start-up ("CPU kernels' variants" below).
# make OPT="-O2 -march=native" (or MARCH=native) builds for this machine alone, without variants.
MARCH ?= x86-64-v2
OPT ?= -O2 -march=$(MARCH)
# the CPU kernels want the vectoriser's full cost model and unrolling
KERNEL_OPT ?= -O3
SAN ?=
DEPS_PKGS = gcc make pkg-config lua5.4 liblua5.4-dev libopenblas-dev libreadline-dev zlib1g-dev \
            libjansson-dev libzip-dev libopenmpi-dev openmpi-bin \
            python3-numpy python3-torch time dataset-fashion-mnist gnuplot-nox fortunes
# oneDNN's sgemm for float32 products on AVX-512 CPUs (src/cpu/gemm_lib.c: dlopen, no -dev needed)
DEPS_PKGS += libdnnl2
# lib/image: the PNG and JPEG codecs (src/serial/png.c, jpeg.c); its tests compare with Pillow
DEPS_PKGS += libpng-dev libjpeg62-turbo-dev python3-pil
# the Jupyter kernel (libzmq: MPL-2.0/LGPL with a linking exception; libcrypto: Apache-2.0), and
# the real Jupyter client its test drives (tests/sh/test_kernel.sh)
DEPS_PKGS += libzmq3-dev libssl-dev python3-jupyter-client jupyter-nbconvert python3-nbformat
# tests/lua/test_special.lua's reference values (tests/lua/scipyref.lua: scipy.special and mpmath)
DEPS_PKGS += python3-scipy python3-mpmath
# tests/sh/test_portable.sh runs the build on emulated older CPUs (qemu-x86_64 -cpu Haswell);
# tests/sh/test_licence.sh reads the shared objects' dependencies (readelf)
DEPS_PKGS += qemu-user binutils
PKG_CFLAGS := $(shell pkg-config --cflags lua5.4 openblas jansson libzip 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs openblas jansson libzip 2>/dev/null)
LUA_LIBS := $(shell pkg-config --libs lua5.4 2>/dev/null)
# the image codecs (src/serial/png.c, jpeg.c): libpng and libjpeg-turbo
IMG_CFLAGS := $(shell pkg-config --cflags libpng libjpeg 2>/dev/null)
IMG_LIBS := $(or $(shell pkg-config --libs libpng libjpeg 2>/dev/null),-lpng16 -ljpeg)
CFLAGS_BASE = -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
              -D_GNU_SOURCE -fno-math-errno $(PKG_CFLAGS) $(IMG_CFLAGS) -I$(BUILD)/gen -Isrc $(SAN)
CFLAGS += $(CFLAGS_BASE)
LIBS = $(PKG_LIBS) $(IMG_LIBS) -lz -lpthread -lm -ldl
LUA = lua5.4

# the library, layer by layer (ARCHITECTURE.md): core, dispatcher, shape inference, the CPU
# backend, the meta device, composite ops, autograd, file formats; then the Lua binding
CORE_SRC := $(wildcard src/core/*.c) $(wildcard src/dispatch/*.c) $(wildcard src/meta/*.c) \
            $(wildcard src/cpu/*.c) $(wildcard src/metadev/*.c) $(wildcard src/composite/*.c) $(wildcard src/autograd/*.c) $(wildcard src/amp/*.c) \
            $(wildcard src/serial/*.c)
# the program's main and its REPL are the program's, not the library's; so is the Jupyter
# kernel (src/repl/kernel*.c, jmsg.c: ZeroMQ and libcrypto's HMAC), built where libzmq is found
REPL_SRC := $(wildcard src/repl/*.c)
KERNEL_SRC := $(wildcard src/repl/kernel*.c) src/repl/jmsg.c
KERNEL_LIBS := $(shell pkg-config --libs libzmq libcrypto 2>/dev/null)
ifeq ($(strip $(KERNEL_LIBS)),)
REPL_SRC := $(filter-out $(KERNEL_SRC),$(REPL_SRC))
$(BUILD)/obj/src/repl/main.o: CFLAGS += -DLT_NO_KERNEL
endif
VM_SRC := $(wildcard src/vm/*.c)
OPS_DECL := $(sort $(wildcard src/ops/*.lua))
EMBED_LUA := $(sort $(wildcard src/vm/lua/*.lua))
# the generator's output (tools/gen.lua): the op table and entry points, each backend's
# kernel table (kernels_B.{h,c}), the Lua bindings, the op reference
GEN_BACKENDS := cpu cuda meta
GEN_OUT := $(BUILD)/gen/lt_ops.h $(BUILD)/gen/lt_ops.c $(BUILD)/gen/lua_ops.c $(BUILD)/gen/lua_t7_ops.c $(BUILD)/gen/ops.md \
           $(foreach b,$(GEN_BACKENDS),$(BUILD)/gen/kernels_$(b).h $(BUILD)/gen/kernels_$(b).c)
# kernels_cpu.c goes into the library with the CPU backend; kernels_cuda.c belongs to the
# CUDA backend's own module (make check-gen compiles it)
GEN_SRC := $(BUILD)/gen/lt_ops.c $(BUILD)/gen/kernels_cpu.c $(BUILD)/gen/kernels_meta.c $(BUILD)/gen/lua_ops.c $(BUILD)/gen/lua_t7_ops.c $(BUILD)/gen/embedded.c
OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC) $(VM_SRC)) \
       $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_SRC))
HDRS := $(wildcard src/*/*.h) $(BUILD)/gen/lt_ops.h $(BUILD)/gen/kernels_cpu.h $(BUILD)/gen/kernels_meta.h

# ---- the CPU kernels' variants (src/cpu/capability.h; ARCHITECTURE.md, "CPU capability") ----
# The kernel files of src/cpu (CPU_VARIANT_SRC) and the generated kernel table are compiled
# once more per variant, for its instruction sets, into one object each ($(BUILD)/obj/cpu_V.o,
# tools/cpu_variant.sh: global names suffixed __V); lt_cpu_init picks one variant at start-up.
# No variants where the build targets this machine alone (-march=native in OPT or MARCH) or
# is not for x86-64: CPU_VARIANTS= on the command line does the same.
CPU_VARIANTS ?= $(if $(filter x86_64,$(shell uname -m)),$(if $(findstring native,$(OPT)),,avx2 avx512))
# the x86-64 psABI levels: v3 = AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE (Haswell, Zen 1 on);
# v4 = AVX-512 F, BW, CD, DQ, VL (Skylake-SP, Ice Lake, Zen 4 on)
CAP_MARCH_avx2 = -march=x86-64-v3
# tuned as GCC tunes the AVX-512 Intel cores (what -march=native gives on them; 256-bit
# vectors by default): measured on an Ice Lake Xeon, x86-64-v4 with the generic tuning (512-bit
# vectors, or 256-bit ones) made conv2d's direct kernel 1.6-2.3x slower (bench/README.md,
# "Portable builds"); AMD's AVX-512 cores (Zen 4 on) run 256-bit code at full width too
CAP_MARCH_avx512 = -march=x86-64-v4 -mtune=icelake-server -mprefer-vector-width=256
# compiled once: state (the allocator, the thread pool, shared memory, the FFT plan cache,
# the backend, the choice itself and the gemm library's), the paths that pick their own instructions at run time
# (cvt.c, quant.c, quant_gemm.c: target attributes), and the LAPACK drivers, whose time is
# spent in OpenBLAS (which picks its own kernels for the CPU). bench/README.md, "Portable
# builds", has the portable build's figures against a native one
CPU_SINGLE_SRC := $(addprefix src/cpu/,alloc.c backend.c capability.c cvt.c parallel.c shm.c fft_plan.c gemm_lib.c \
                  quant.c quant_gemm.c creation.c lapack_batch.c linalg.c linalg_eig.c linalg_lstsq.c \
                  linalg_solve.c linalg_solve_chol.c linalg_spectral.c linalg_spectral_eig.c linalg_t7.c)
CPU_VARIANT_SRC := $(filter-out $(CPU_SINGLE_SRC),$(wildcard src/cpu/*.c))
CPU_VARIANT_OBJ := $(foreach v,$(CPU_VARIANTS),$(BUILD)/obj/cpu_$(v).o)
OBJ += $(CPU_VARIANT_OBJ)
# capability.c references the descriptor of each variant built
CAP_CFLAGS_capability = $(foreach v,$(CPU_VARIANTS),-DLT_CAP_HAVE_$(v))

all: $(BUILD)/lutorch $(BUILD)/liblutorch.a $(BUILD)/liblutorch.so $(BUILD)/torch.so

$(GEN_OUT) &: tools/gen.lua tools/gen_t7.lua tools/gen_meta.lua tools/gen_autocast.lua tools/decl.lua $(OPS_DECL)
	@mkdir -p $(BUILD)/gen
	$(LUA) tools/gen.lua $(BUILD)/gen $(OPS_DECL)

$(BUILD)/gen/embedded.c: tools/embed.lua $(EMBED_LUA)
	@mkdir -p $(BUILD)/gen
	$(LUA) tools/embed.lua $@ $(EMBED_LUA)

# a kernel whose prototype differs from its op's kernel type is an error, not a warning
GEN_CFLAGS = -Werror=incompatible-pointer-types
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) $(GEN_CFLAGS) -c $< -o $@

# the kernel tables of backends not built here compile too (nothing is kept)
# and every op without a CUDA kernel is listed, with the reason, in src/cuda/kernels_left.lua
check-gen: $(GEN_OUT)
	@$(LUA) tools/gen.lua --check --left cuda=src/cuda/kernels_left.lua $(OPS_DECL) >$(BUILD)/gen/check.txt || \
	  { cat $(BUILD)/gen/check.txt; exit 1; }
	@for b in $(filter-out cpu,$(GEN_BACKENDS)); do \
	  echo "  CC $(BUILD)/gen/kernels_$$b.c (check)"; \
	  $(CC) $(CFLAGS) $(GEN_CFLAGS) -fsyntax-only $(BUILD)/gen/kernels_$$b.c || exit 1; \
	done

# src/cpu: the kernel flags, then each file's own (KFLAGS_<file>; the ISA variants use them too)
$(BUILD)/obj/src/cpu/%.o: src/cpu/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) $(KERNEL_OPT) $(KFLAGS_$*) $(CAP_CFLAGS_$*) -c $< -o $@
# GCC 12.2 dies (internal compiler error in extract_insn) vectorising the special functions'
# loops with the dynamic cost model; the cheap model is what -O2 used for them
KFLAGS_math_special = -fvect-cost-model=very-cheap
# the activations', GELU's erf clamps' and the 2x2 max pool's branches if-convert (and
# vectorise) only where a comparison may not trap
KFLAGS_nn_act = -fno-trapping-math
KFLAGS_nn_pool = -fno-trapping-math
KFLAGS_ew_unary = -fno-trapping-math
# measured (bench/README.md, Backends): the elementwise driver's short path for small tensors
# and the dropout kernels run 3-8% faster at -O2 than at -O3, so their kernel flags stay -O2
KFLAGS_iter = $(if $(KERNEL_OPT),-O2)
KFLAGS_nn_misc = $(if $(KERNEL_OPT),-O2)
# the row reductions use 32-byte GCC vectors in static functions; without AVX (the baseline)
# GCC warns that passing them would change the ABI, which no call outside the file sees
KFLAGS_nn_softmax = -Wno-psabi
# the samplers' a + u * (b - a) must not become an FMA in the AVX2/AVX-512 variants only: the
# numbers of a seed are then the same whichever variant runs, and the CUDA backend's host
# build (which checks its samplers against these) gets them too
KFLAGS_random = -ffp-contract=off
# a file's flags in one variant only, after the variant's own (KFLAGS_<file>_<variant>): the
# activations with libmvec's 16-lane functions. Not ew_unary.c: built so, its float16 log10
# came out one float16 unit off the CUDA kernels' host build (libm) for some inputs, most
# likely a last-bit difference of the 16-lane log10f flipping the rounding to float16
# (tests/lua/cuda/test_pointwise.lua); the 8-lane functions agree
KFLAGS_nn_act_avx512 = -mprefer-vector-width=512
$(BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# one variant V of the CPU kernels: its objects under $(BUILD)/obj/cpu-V/, then cpu_V.o
define lt_cpu_variant
$(BUILD)/obj/cpu-$(1)/%.o: src/cpu/%.c $$(HDRS)
	@mkdir -p $$(dir $$@)
	@echo "  CC $$< ($(1))"
	@$$(CC) $$(CFLAGS) $$(KERNEL_OPT) $$(KFLAGS_$$*) $$(CAP_MARCH_$(1)) $$(KFLAGS_$$*_$(1)) -c $$< -o $$@
$(BUILD)/obj/cpu-$(1)/kernels_cpu.o: $(BUILD)/gen/kernels_cpu.c $$(HDRS)
	@mkdir -p $$(dir $$@)
	@echo "  CC $$< ($(1))"
	@$$(CC) $$(CFLAGS) $$(GEN_CFLAGS) $$(CAP_MARCH_$(1)) -c $$< -o $$@
$(BUILD)/obj/cpu_$(1).o: $$(patsubst src/cpu/%.c,$(BUILD)/obj/cpu-$(1)/%.o,$$(CPU_VARIANT_SRC)) \
                         $(BUILD)/obj/cpu-$(1)/kernels_cpu.o tools/cpu_variant.sh
	@echo "  VARIANT $$@"
	@sh tools/cpu_variant.sh $(1) $$@ $$(filter %.o,$$^)
endef
$(foreach v,$(CPU_VARIANTS),$(eval $(call lt_cpu_variant,$(v))))

$(BUILD)/liblutorch.a: $(OBJ)
	@rm -f $@
	@echo "  AR $@"
	@ar rcs $@ $^

$(BUILD)/liblutorch.so: $(OBJ)
	@echo "  LD $@"
	@$(CC) -shared $(SAN) -o $@ $^ $(LIBS) $(LUA_LIBS)

# the same core as a Lua C module: the host interpreter provides the Lua API
$(BUILD)/torch.so: $(OBJ)
	@echo "  LD $@"
	@$(CC) -shared $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/lutorch: $(patsubst %.c,$(BUILD)/obj/%.o,$(REPL_SRC)) $(OBJ)
	@echo "  LD $@"
	@$(CC) $(SAN) -o $@ $^ $(LIBS) $(LUA_LIBS) -lreadline $(KERNEL_LIBS) -Wl,-E

# ---- distributed: torch.distributed's C half, a module of its own linked against MPI ----
# Built where OpenMPI's pkg-config file (or mpicc) is found; skipped quietly otherwise. It is
# never linked into liblutorch or the program: they start fast and run without MPI.
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile 2>/dev/null)
MPI_LIBS := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link 2>/dev/null)
DIST_SRC := $(wildcard src/dist/*.c)
DIST_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(DIST_SRC))
ifneq ($(strip $(MPI_LIBS)),)
all: $(BUILD)/lutorch_dist.so
endif
$(DIST_OBJ): CFLAGS += $(MPI_CFLAGS)
$(BUILD)/lutorch_dist.so: $(DIST_OBJ)
	@echo "  LD $@"
	@$(CC) -shared $(SAN) -o $@ $^ $(MPI_LIBS) -lpthread -ldl
# ---- end of distributed ----

# ---- cuda: the driver seam and the fake driver (plain C, built and tested in every build) ----
# src/cuda/*.c is compiled into $(LTCUDA_LIB), a static archive that the CUDA module
# (lutorch_cuda.so, where nvcc is found) and the C tests of src/cuda link; it is never part of
# liblutorch: the core does not depend on the CUDA backend. tests/c/test_cuda_*.c link the
# archive before the library. The dlopen path of lt_cu_driver_open is tested against stand-ins
# for libcuda.so.1 ($(CUDA_STUBS), tests/fake/libcuda_stub.c). Where the toolkit's cuda.h is
# found, test_cuda_abi checks the seam's types, values and signatures against it (else SKIP).
CUDA_HOME ?= /usr/local/cuda
# the archive holds the driver seam and the allocator; every other src/cuda/*.c is the backend
# module's (its block below)
CUDA_C_SRC := src/cuda/driver.c src/cuda/fake_driver.c src/cuda/alloc.c
CUDA_MOD_SRC := $(filter-out $(CUDA_C_SRC),$(wildcard src/cuda/*.c))
CUDA_C_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_C_SRC))
LTCUDA_LIB := $(BUILD)/libltcuda.a
# what a program or module linking $(LTCUDA_LIB) needs besides it
LTCUDA_LIBS := -ldl -lpthread
all: $(LTCUDA_LIB)
$(LTCUDA_LIB): $(CUDA_C_OBJ)
	@rm -f $@
	@echo "  AR $@"
	@ar rcs $@ $^
$(BUILD)/tests/test_cuda_%: tests/c/test_cuda_%.c $(LTCUDA_LIB) $(BUILD)/liblutorch.a tests/c/ctest.h tests/c/cu_double.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(LTCUDA_LIB) $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS) $(LTCUDA_LIBS)
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
$(BUILD)/tests/test_cuda_abi: private CFLAGS += -DLT_HAVE_CUDA_H -I$(CUDA_HOME)/include
endif
ifneq ($(wildcard $(CUDA_HOME)/include/cublas_api.h),)
$(BUILD)/tests/test_cuda_blas: private CFLAGS += -DLT_HAVE_CUDA_H -I$(CUDA_HOME)/include
endif
$(BUILD)/tests/test_cuda_blas: src/cuda/fake_blas.c src/cuda/blas.h
CUDA_STUBS := $(foreach v,full nolaunch nov2,$(BUILD)/tests/cudastub/$(v)/libcuda.so.1)
$(BUILD)/tests/cudastub/nolaunch/libcuda.so.1: STUB_DEFS = -DLT_STUB_NO_LAUNCH
$(BUILD)/tests/cudastub/nov2/libcuda.so.1: STUB_DEFS = -DLT_STUB_NO_V2
$(CUDA_STUBS): tests/fake/libcuda_stub.c src/cuda/driver.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(STUB_DEFS) -shared -Wl,-soname,libcuda.so.1 -o $@ $<
test-c: $(CUDA_STUBS)
# ---- end of cuda driver seam ----

# ---- cuda: the backend module, lutorch_cuda.so (plain C: built in every build) ----
# The CUDA backend (src/cuda/backend.c, device.c) with its generated kernel table and its Lua
# face (lcuda.c), over $(LTCUDA_LIB). It is loaded at run time, by torch.cuda the first time a
# CUDA device is asked for (src/vm/lbackend_load.c), or by require "lutorch_cuda"; it resolves
# the core's symbols against the program or library that holds the core, so it links none of
# it. Without a driver it registers nothing and torch.cuda says why; under
# LUTORCH_CUDA_DRIVER=fake it runs on host memory with the CPU's kernels where CUDA has none.
CUDA_MOD_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_MOD_SRC)) $(BUILD)/obj/gen/kernels_cuda.o
# THE KERNEL HOOK: the objects of the CUDA kernels and what they need to link. The host build
# of src/cuda/kernels (CK_HOST_OBJ, plain C++ without exceptions or RTTI) goes in every build;
# the nvcc build (CUDA_KERNEL_OBJ = CK_DEV_OBJ, with CUDA_KERNEL_LIBS = CK_DEV_LIBS: the static
# runtime, which opens the driver itself at the first launch, so the module still loads where
# there is none) only where nvcc is found. Both are set in "CUDA kernels" below, which also
# adds them to the module's prerequisites; elementwise.c finds the nvcc build through a weak
# reference, so the same object serves both.
all: $(BUILD)/lutorch_cuda.so
$(CUDA_MOD_OBJ): $(BUILD)/gen/kernels_cuda.h
# the headers that torch.compile's CUDA kernels include, embedded in the module (src/cuda/rtc.c)
RTC_HEADERS := cuda/kernels/ck_math.h cuda/kernels/ck_host.h
CUDA_MOD_OBJ += $(BUILD)/obj/gen/rtc_headers.o
$(BUILD)/gen/rtc_headers.c: tools/embed.lua $(addprefix src/,$(RTC_HEADERS))
	@mkdir -p $(BUILD)/gen
	$(LUA) tools/embed.lua --text $@ lt_cuda_rtc_headers src $(RTC_HEADERS)
$(BUILD)/lutorch_cuda.so: $(CUDA_MOD_OBJ) $(LTCUDA_LIB)
	@echo "  LD $@"
	@$(CC) -shared $(SAN) -o $@ $(CUDA_MOD_OBJ) $(CK_HOST_OBJ) $(CUDA_KERNEL_OBJ) $(LTCUDA_LIB) $(LTCUDA_LIBS) \
	  $(CUDA_KERNEL_LIBS) -lm
# ---- end of the cuda backend module ----

deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

run: deps
	$(MAKE) all
	./$(BUILD)/lutorch

# make test builds on every CPU (CI's fresh machine has two): BUILD_JOBS=1 for a serial build
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: deps
	$(MAKE) -j$(BUILD_JOBS) all
	$(MAKE) check-gen
	$(MAKE) -j$(BUILD_JOBS) test-c
	@BUILD=$(BUILD) sh tests/run.sh

# C unit tests: each tests/c/test_*.c links against the static library
CTESTS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(wildcard tests/c/test_*.c))
# the Jupyter wire format's test links the program's jmsg.o (not in the library)
ifeq ($(strip $(KERNEL_LIBS)),)
CTESTS := $(filter-out $(BUILD)/tests/test_jmsg,$(CTESTS))
endif
$(BUILD)/tests/test_jmsg: tests/c/test_jmsg.c $(BUILD)/obj/src/repl/jmsg.o tests/c/ctest.h src/repl/jmsg.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(BUILD)/obj/src/repl/jmsg.o $(PKG_LIBS) $(KERNEL_LIBS)
$(BUILD)/tests/%: tests/c/%.c $(BUILD)/liblutorch.a tests/c/ctest.h tests/fake/fake_backend.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS)

# the fake "cuda" backend as a Lua module for tests/lua/test_backend_fake.lua
$(BUILD)/tests/fake_cuda.so: tests/fake/fake_cuda.c tests/fake/fake_backend.h $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $<

test-c: $(CTESTS) $(BUILD)/tests/fake_cuda.so

# ---- the CUDA caching allocator's benchmark (its test is a tests/c/test_cuda_% above) ----
# built with the tests so it keeps compiling; run by hand (make cuda-alloc-bench)
$(BUILD)/bench/cuda_alloc_bench: bench/cuda_alloc_bench.c tests/c/cu_double.h $(LTCUDA_LIB) $(BUILD)/liblutorch.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(LTCUDA_LIB) $(BUILD)/liblutorch.a $(LIBS) $(LTCUDA_LIBS)
test-c: $(BUILD)/bench/cuda_alloc_bench
cuda-alloc-bench: $(BUILD)/bench/cuda_alloc_bench
	./$(BUILD)/bench/cuda_alloc_bench
.PHONY: cuda-alloc-bench
# ---- end of the CUDA caching allocator's benchmark ----

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fno-omit-frame-pointer" KERNEL_OPT= \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" all test-c
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  LUTORCH_SANITIZE=1 BUILD=build-asan sh tests/run.sh

bench: all
	sh bench/run.sh

clean:
	rm -rf $(BUILD) build-asan

.PHONY: all deps run test test-c check-gen asan bench clean

# ---- embedding and install: public headers, lutorch.pc, make install / uninstall ----
# include/lutorch.h includes copies of the core headers it needs, made under
# $(BUILD)/include/lutorch/ with their includes made relative, so the same
# layout works in the tree (build/lutorch.pc) and installed (PREFIX/include).
# the one version number lives in include/lutorch.h (LUTORCH_VERSION)
VERSION := $(shell sed -n 's/^\#define LUTORCH_VERSION "\(.*\)"$$/\1/p' include/lutorch.h)
SOMAJOR = 0
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
INCDIR = $(PREFIX)/include
MANDIR = $(PREFIX)/share/man
PCDIR = $(LIBDIR)/pkgconfig
DATADIR = $(PREFIX)/share/lutorch
# the Jupyter kernelspec (where jupyter looks under /usr/local and /usr; JUPYTER_PATH elsewhere)
KERNELSPEC_DIR = $(PREFIX)/share/jupyter/kernels/lutorch
# where a stock lua5.4 looks (Debian: /usr/local/share/lua/5.4, /usr/local/lib/lua/5.4)
LUA_LMOD = $(PREFIX)/share/lua/5.4
LUA_CMOD = $(PREFIX)/lib/lua/5.4
PUB_HDRS := core/tensor.h core/dtype.h core/alloc.h core/error.h core/rng.h core/backend.h core/views.h \
            cpu/parallel.h cpu/cpu.h dispatch/dispatch.h autograd/autograd.h \
            dispatch/registry.h autograd/custom_autograd.h autograd/extension.h
PUB_INC = $(BUILD)/include/lutorch
PUB_FILES = $(addprefix $(PUB_INC)/,$(PUB_HDRS)) $(PUB_INC)/lt_ops.h
LUA_MODS := $(sort $(shell find lib -name '*.lua' 2>/dev/null))
ABS_BUILD = $(abspath $(BUILD))

all: $(PUB_FILES) $(BUILD)/lutorch.pc

$(PUB_INC)/lt_ops.h: $(BUILD)/gen/lt_ops.h
	@mkdir -p $(dir $@)
	@cp $< $@

$(PUB_INC)/%.h: src/%.h
	@mkdir -p $(dir $@)
	@sed -e 's,^#include "\(core\|cpu\|dispatch\|autograd\)/,#include "../\1/,' $< >$@

# pkg-config: lutorch.pc for the file at $(1) with prefix, libdir, includedir and extra cflags
define lt_write_pc
	@mkdir -p $(dir $(1))
	@printf '%s\n' '# lutorch: MIT licence (LICENSE, THIRD_PARTY.md)' 'prefix=$(2)' 'libdir=$(3)' 'includedir=$(4)' '' \
	  'Name: lutorch' 'Description: tensors, autograd and nn for Lua 5.4, embeddable in C' \
	  'Version: $(VERSION)' 'Requires: lua5.4' 'Requires.private: openblas jansson libzip zlib libpng libjpeg' \
	  'Cflags: -I$${includedir}$(5)' 'Libs: -L$${libdir} -llutorch' \
	  'Libs.private: -lm -lpthread -ldl' >$(1)
endef

# in the tree: PKG_CONFIG_PATH=$(BUILD) pkg-config --cflags --libs lutorch
$(BUILD)/lutorch.pc: Makefile
	$(call lt_write_pc,$@,$(CURDIR),$(ABS_BUILD),$(CURDIR)/include, -I$(ABS_BUILD)/include)

# the installed shared library carries a soname
$(BUILD)/liblutorch.so.$(VERSION): $(OBJ)
	@echo "  LD $@"
	@$(CC) -shared $(SAN) -Wl,-soname,liblutorch.so.$(SOMAJOR) -o $@ $^ $(LIBS) $(LUA_LIBS)

# man pages: man/*.1 man/*.3 and what the manual generates in $(BUILD)/man
install: all $(BUILD)/liblutorch.so.$(VERSION)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/lutorch \
	  $(DESTDIR)$(LUA_CMOD) $(DESTDIR)$(LUA_LMOD) $(DESTDIR)$(DATADIR)/man
	install -m 755 $(BUILD)/lutorch $(DESTDIR)$(BINDIR)/lutorch
	install -m 644 $(BUILD)/liblutorch.a $(DESTDIR)$(LIBDIR)/liblutorch.a
	install -m 755 $(BUILD)/liblutorch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liblutorch.so.$(VERSION)
	ln -sf liblutorch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liblutorch.so.$(SOMAJOR)
	ln -sf liblutorch.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/liblutorch.so
	install -m 755 $(BUILD)/torch.so $(DESTDIR)$(LUA_CMOD)/torch.so
	if [ -f $(BUILD)/lutorch_dist.so ]; then install -m 755 $(BUILD)/lutorch_dist.so $(DESTDIR)$(LUA_CMOD)/lutorch_dist.so && \
	  install -d $(DESTDIR)$(LIBDIR)/lutorch && ln -sf ../lua/5.4/lutorch_dist.so $(DESTDIR)$(LIBDIR)/lutorch/lutorch_dist.so; fi
	if [ -f $(BUILD)/lutorch_cuda.so ]; then install -m 755 $(BUILD)/lutorch_cuda.so $(DESTDIR)$(LUA_CMOD)/lutorch_cuda.so && \
	  install -d $(DESTDIR)$(LIBDIR)/lutorch && ln -sf ../lua/5.4/lutorch_cuda.so $(DESTDIR)$(LIBDIR)/lutorch/lutorch_cuda.so; fi
	install -m 644 include/lutorch.h $(DESTDIR)$(INCDIR)/lutorch.h
	install -m 644 include/lutorch/extension.h $(DESTDIR)$(INCDIR)/lutorch/extension.h
	for h in lt_ops.h $(PUB_HDRS); do install -D -m 644 $(PUB_INC)/$$h $(DESTDIR)$(INCDIR)/lutorch/$$h || exit 1; done
	for f in $(LUA_MODS); do install -D -m 644 $$f $(DESTDIR)$(LUA_LMOD)/$${f#lib/} || exit 1; done
	for f in man/*.md; do [ -f "$$f" ] && install -m 644 $$f $(DESTDIR)$(DATADIR)/man/ || true; done
	for f in man/*.[137] $(BUILD)/man/*.[137]; do [ -f "$$f" ] || continue; \
	  install -D -m 644 $$f $(DESTDIR)$(MANDIR)/man$${f##*.}/$${f##*/} || exit 1; done
	$(call lt_write_pc,$(DESTDIR)$(PCDIR)/lutorch.pc,$(PREFIX),$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR)),$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCDIR)),)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi
	if [ -n "$(strip $(KERNEL_LIBS))" ]; then install -d $(DESTDIR)$(KERNELSPEC_DIR) && \
	  printf '{\n "argv": ["%s", "--kernel", "-f", "{connection_file}"],\n "display_name": "Lutorch",\n "language": "lua",\n "interrupt_mode": "signal",\n "metadata": {}\n}\n' \
	  '$(BINDIR)/lutorch' >$(DESTDIR)$(KERNELSPEC_DIR)/kernel.json; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/lutorch $(DESTDIR)$(LIBDIR)/liblutorch.a $(DESTDIR)$(LIBDIR)/liblutorch.so \
	  $(DESTDIR)$(LIBDIR)/liblutorch.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/liblutorch.so.$(VERSION) \
	  $(DESTDIR)$(LUA_CMOD)/torch.so $(DESTDIR)$(LUA_CMOD)/lutorch_dist.so $(DESTDIR)$(LIBDIR)/lutorch/lutorch_dist.so \
	  $(DESTDIR)$(LUA_CMOD)/lutorch_cuda.so $(DESTDIR)$(LIBDIR)/lutorch/lutorch_cuda.so \
	  $(DESTDIR)$(INCDIR)/lutorch.h $(DESTDIR)$(INCDIR)/lutorch/extension.h $(DESTDIR)$(PCDIR)/lutorch.pc
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/lutorch/,lt_ops.h $(PUB_HDRS))
	rm -f $(patsubst lib/%,$(DESTDIR)$(LUA_LMOD)/%,$(LUA_MODS))
	rm -f $(DESTDIR)$(DATADIR)/man/*.md $(DESTDIR)$(KERNELSPEC_DIR)/kernel.json
	rmdir $(DESTDIR)$(KERNELSPEC_DIR) $(DESTDIR)$(PREFIX)/share/jupyter/kernels $(DESTDIR)$(PREFIX)/share/jupyter 2>/dev/null; true
	for f in man/*.[137] $(BUILD)/man/*.[137] $(DESTDIR)$(MANDIR)/man[137]/lutorch*.[137]; do \
	  [ -f "$$f" ] && rm -f $(DESTDIR)$(MANDIR)/man$${f##*.}/$${f##*/}; done; true
	rmdir $(addprefix $(DESTDIR)$(INCDIR)/lutorch/,core cpu dispatch autograd) $(DESTDIR)$(INCDIR)/lutorch \
	  $(DESTDIR)$(DATADIR)/man $(DESTDIR)$(DATADIR) $(DESTDIR)$(LIBDIR)/lutorch \
	  $(sort $(dir $(patsubst lib/%,$(DESTDIR)$(LUA_LMOD)/%,$(filter lib/*/%,$(LUA_MODS))))) 2>/dev/null; true

# for luarocks (lutorch-*.rockspec): the module and the Lua libraries only
# (tests/sh/test_rockspec.sh runs `luarocks make` into a private tree)
DEPS_PKGS += luarocks
lua-module: $(BUILD)/torch.so
install-lua: lua-module
	install -d $(DESTDIR)$(LUA_CMOD) $(DESTDIR)$(LUA_LMOD)
	install -m 755 $(BUILD)/torch.so $(DESTDIR)$(LUA_CMOD)/torch.so
	for f in $(LUA_MODS); do install -D -m 644 $$f $(DESTDIR)$(LUA_LMOD)/$${f#lib/} || exit 1; done

.PHONY: install uninstall lua-module install-lua
# ---- end of embedding and install ----

# ---- manual: man/*.md and the op declarations -> groff pages in $(BUILD)/man (tools/man.lua) ----
# man/tensor.md is lutorch(7), man/X.md lutorch-X(7), src/ops/*.lua lutorch-ops(7). Without
# $(LUA) the pages are skipped with a note; nothing else depends on them.
MAN_MD := $(sort $(wildcard man/*.md))
MAN_PAGES := $(BUILD)/man/lutorch-ops.7 \
             $(patsubst man/%.md,$(BUILD)/man/lutorch-%.7,$(filter-out man/tensor.md,$(MAN_MD))) \
             $(if $(filter man/tensor.md,$(MAN_MD)),$(BUILD)/man/lutorch.7)
DEPS_PKGS += groff-base man-db

all: man
man: $(MAN_PAGES)

define lt_man
	@mkdir -p $(BUILD)/man
	@if command -v $(LUA) >/dev/null 2>&1; then echo "  MAN $@"; $(LUA) tools/man.lua $(1); \
	 else echo "  MAN $@ skipped: no $(LUA)"; fi
endef
# every page lists the others under SEE ALSO, so a new chapter remakes them all
$(BUILD)/man/lutorch-ops.7: tools/man.lua tools/decl.lua $(OPS_DECL) $(MAN_MD)
	$(call lt_man,ops $@ $(OPS_DECL) -- $(MAN_MD))
$(BUILD)/man/lutorch.7: man/tensor.md tools/man.lua $(MAN_MD)
	$(call lt_man,page $< $@ $(MAN_MD))
$(BUILD)/man/lutorch-%.7: man/%.md tools/man.lua $(MAN_MD)
	$(call lt_man,page $< $@ $(MAN_MD))

.PHONY: man
# ---- end of manual ----

# ---- CUDA kernels (src/cuda/kernels): the nvcc build and make cuda-check; the host build ----
# The elementwise kernels are written once and built twice (man/cuda.md, "Kernels and make
# cuda-check"):
#   - by nvcc for sm_90 into $(BUILD)/cuda/kernels/*.o (CK_DEV_OBJ, for the CUDA module to
#     link), each with the ptxas report beside it (*.ptxas). make cuda-check builds them with
#     warnings as errors, fails when a kernel marked LT_HOT spills registers
#     (tools/ptxas_spills.sh), compiles a kernel made at run time with NVRTC
#     (tests/cuda/test_nvrtc.c), and links the objects with the static runtime into a shared
#     object that must load without a driver (tests/cuda/test_kernels_load.c). make test
#     runs it where nvcc is found, and says it skips it otherwise (NVCC= on the command line
#     forces the skip);
#   - by the host C++ compiler into $(BUILD)/obj/cuda_host/*.o (CK_HOST_OBJ): the kernels the
#     fake driver runs, tested on every machine by build/tests/test_cuda_kernels_host (built
#     with -DCK_NO_HOST_BUILD, to report a skip, where no C++ compiler is found).
ifeq ($(origin NVCC),undefined)
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
CUDA_HOME ?= $(if $(NVCC),$(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(realpath $(NVCC)))))))
CK_ARCH ?= sm_90
CK_SRC := $(sort $(wildcard src/cuda/kernels/*.cu))
CK_HDRS := $(wildcard src/cuda/kernels/*.h) src/meta/special_math.h
CK_DEV_OBJ := $(patsubst src/cuda/kernels/%.cu,$(BUILD)/cuda/kernels/%.o,$(CK_SRC))
CK_HOST_OBJ := $(patsubst src/cuda/kernels/%.cu,$(BUILD)/obj/cuda_host/%.o,$(CK_SRC))
# -Werror all-warnings: nvcc's and the device front end's warnings; -Xcompiler: the host
# compiler's; -Xptxas -Werror: ptxas's. -v: the per-kernel report (registers, spills).
NVCC_FLAGS = -std=c++17 -arch=$(CK_ARCH) -O3 -Isrc -Xcompiler -fPIC -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror -Xptxas -v,-Werror
# what a shared object linking CK_DEV_OBJ needs: the static runtime (it opens the driver
# itself, at the first launch, so the object loads where there is none) and libstdc++
CK_DEV_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -lpthread -ldl -lstdc++
CK_CXX := $(shell command -v $(CXX) 2>/dev/null)
# gnu++17 contracts a*b+c into an FMA as nvcc does; no exceptions or RTTI, so the objects link
# into C programs without libstdc++
CK_CXXFLAGS = -x c++ -std=gnu++17 $(OPT) -g -fPIC -fno-exceptions -fno-rtti -fno-strict-aliasing \
              -Wall -Wextra -Werror -Isrc $(SAN) $(if $(SAN),-fno-sanitize=vptr)
DEPS_PKGS += g++
# the CUDA module's kernel hook (see "cuda: the backend module" above)
ifneq ($(NVCC),)
CUDA_KERNEL_OBJ ?= $(CK_DEV_OBJ)
CUDA_KERNEL_LIBS ?= $(CK_DEV_LIBS)
endif
$(BUILD)/lutorch_cuda.so: $(CK_HOST_OBJ) $(CUDA_KERNEL_OBJ)

$(BUILD)/cuda/kernels/%.o $(BUILD)/cuda/kernels/%.ptxas: src/cuda/kernels/%.cu $(CK_HDRS)
	@mkdir -p $(dir $@)
	@echo "  NVCC $<"
	@$(NVCC) $(NVCC_FLAGS) -c $< -o $(BUILD)/cuda/kernels/$*.o >$(BUILD)/cuda/kernels/$*.ptxas 2>&1 || \
	  { cat $(BUILD)/cuda/kernels/$*.ptxas; rm -f $(BUILD)/cuda/kernels/$*.o $(BUILD)/cuda/kernels/$*.ptxas; exit 1; }

$(BUILD)/cuda/test_nvrtc: tests/cuda/test_nvrtc.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -I$(CUDA_HOME)/include -o $@ $< \
	  -L$(CUDA_HOME)/lib64 -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64

# the kernel objects alone in a shared object, for test_kernels_load (not the CUDA module)
$(BUILD)/cuda/kernels_check.so: $(CK_DEV_OBJ)
	@echo "  LD $@"
	@$(CC) -shared -Wl,--no-undefined -o $@ $^ $(CK_DEV_LIBS)

$(BUILD)/cuda/test_kernels_load: tests/cuda/test_kernels_load.c src/cuda/kernels/kernels.h
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -Isrc -o $@ $< -ldl

ifneq ($(NVCC),)
cuda-check: $(CK_DEV_OBJ:.o=.ptxas) $(BUILD)/cuda/test_nvrtc $(BUILD)/cuda/kernels_check.so $(BUILD)/cuda/test_kernels_load
	@sh tools/ptxas_spills.sh $(CK_DEV_OBJ:.o=.ptxas)
	@printf 'nvrtc: '; $(BUILD)/cuda/test_nvrtc src $(CUDA_HOME)/include
	@printf 'load: '; $(BUILD)/cuda/test_kernels_load $(BUILD)/cuda/kernels_check.so
else
cuda-check:
	@echo "SKIP cuda-check: nvcc not found (looked on PATH and in /usr/local/cuda/bin; set NVCC=)"
endif
test: cuda-check

$(BUILD)/obj/cuda_host/%.o: src/cuda/kernels/%.cu $(CK_HDRS)
	@mkdir -p $(dir $@)
	@echo "  CXX $< (host build)"
	@$(CXX) $(CK_CXXFLAGS) -c $< -o $@

ifneq ($(CK_CXX),)
$(BUILD)/tests/test_cuda_kernels_host: tests/c/test_cuda_kernels_host.c $(CK_HOST_OBJ) $(BUILD)/liblutorch.a \
                                       tests/c/ctest.h src/cuda/kernels/kernels.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(CK_HOST_OBJ) $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS)
else
$(BUILD)/tests/test_cuda_kernels_host: tests/c/test_cuda_kernels_host.c tests/c/ctest.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCK_NO_HOST_BUILD -Itests/c -o $@ $<
endif

# tests/c/test_ck_*.c: C tests of a kernel family's host build (each family's own file)
ifneq ($(CK_CXX),)
$(BUILD)/tests/test_ck_%: tests/c/test_ck_%.c $(CK_HOST_OBJ) $(BUILD)/liblutorch.a tests/c/ctest.h $(CK_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(CK_HOST_OBJ) $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS)
else
$(BUILD)/tests/test_ck_%: tests/c/test_ck_%.c tests/c/ctest.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCK_NO_HOST_BUILD -Itests/c -o $@ $<
endif

.PHONY: cuda-check
# ---- end of CUDA kernels ----

# ---- gpu-bundle: a portable lutorch for the lent GPU machine (tools/gpu_check.sh) ----
# That machine (man/cuda.md, "Checking on a GPU") has nvcc, a driver and PyTorch but no Lua,
# OpenBLAS or apt, and another CPU. make gpu-bundle builds lutorch here into
# $(GPU_BUNDLE)/build for -march=$(GPU_MARCH) with the kernels for sm_90, then
# tools/gpu_bundle.sh copies the programs and the shared libraries they need from this
# system (ldd; glibc, libstdc++ and the loader kept apart, for a target whose glibc is older)
# into $(GPU_BUNDLE)/dist and packs it as $(GPU_BUNDLE)/pack/lutorch-gpu.tar.gz, failing when
# the pack is over $(GPU_BUNDLE_MAX_MIB) MiB (the device tool carries 64 MiB, tree included).
# $(GPU_BUNDLE) is git-ignored; the run carries $(GPU_BUNDLE)/pack.
GPU_BUNDLE ?= gpu-bundle
GPU_MARCH ?= x86-64-v3
GPU_BUNDLE_MAX_MIB ?= 48
gpu-bundle:
	$(MAKE) BUILD=$(GPU_BUNDLE)/build MARCH=$(GPU_MARCH) CPU_VARIANTS=avx512 CK_ARCH=sm_90 all \
	  $(GPU_BUNDLE)/build/tests/test_cuda_alloc $(GPU_BUNDLE)/build/bench/cuda_alloc_bench
	sh tools/gpu_bundle.sh $(GPU_BUNDLE) $(GPU_BUNDLE_MAX_MIB)
.PHONY: gpu-bundle
# ---- end of gpu-bundle ----

# ---- deb: Debian packages (debian/) ----
# make deb copies the tree's files (tracked and untracked-but-not-ignored) into
# $(DEB_DIR)/lutorch-$(VERSION) and runs dpkg-buildpackage there, so the checkout and its
# build/ stay as they are; the .debs land in $(DEB_DIR). tests/pkg/deb_check.sh runs lintian
# on them and installs them on a clean Debian (a debootstrap chroot).
DEB_DIR ?= $(BUILD)/deb
DEB_PKGS = debhelper dpkg-dev fakeroot
deb:
	@missing=""; for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
	  grep -q "install ok installed" || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then echo "make deb needs:$$missing (apt-get install$$missing)"; exit 1; fi
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/lutorch-$(VERSION)
	git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t $(DEB_DIR)/lutorch-$(VERSION)
	cd $(DEB_DIR)/lutorch-$(VERSION) && dpkg-buildpackage -us -uc -b
	@ls -1 $(DEB_DIR)/*.deb
.PHONY: deb
# ---- end of deb ----

# ---- fuzz: libFuzzer targets over every reader of untrusted bytes (fuzz/README.md) ----
# The library is compiled again with clang, AddressSanitizer, UBSan and libFuzzer's coverage
# instrumentation into $(FUZZ_BUILD)/fobj (its own object tree: the gcc-only flags of the
# kernel rules above do not apply), and each fuzz/fuzz_NAME.c links with it into
# $(FUZZ_BUILD)/fuzz_NAME. make fuzz builds them and runs each for FUZZ_SECONDS on its corpus
# (fuzz/corpus/NAME, grown in $(FUZZ_BUILD)/corpus/NAME) and its regressions (fuzz/regress/NAME);
# a crash is left in $(FUZZ_BUILD)/artifacts/NAME. make test replays the committed corpus and
# regressions with the ordinary build's replay programs ($(BUILD)/fuzz/replay_NAME, made by
# test-c; tests/sh/test_fuzz.sh), and runs each target for a few seconds where they are built.
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(sort $(patsubst fuzz/fuzz_%.c,%,$(filter-out fuzz/fuzz_lua.c,$(wildcard fuzz/fuzz_*.c))))
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-sanitize=function
FUZZ_CFLAGS = -std=gnu11 -O1 -g -fno-omit-frame-pointer -fPIC -D_GNU_SOURCE -fno-math-errno -w \
              $(PKG_CFLAGS) -I$(FUZZ_BUILD)/gen -Isrc -Ifuzz -include fuzz/clang_compat.h $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LIB_SRC := $(CORE_SRC) $(VM_SRC)
FUZZ_GEN_SRC := $(patsubst $(BUILD)/gen/%,$(FUZZ_BUILD)/gen/%,$(GEN_SRC))
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/fobj/%.o,$(FUZZ_LIB_SRC)) \
            $(patsubst $(FUZZ_BUILD)/gen/%.c,$(FUZZ_BUILD)/fobj/gen/%.o,$(FUZZ_GEN_SRC))
FUZZ_HDRS := $(wildcard src/*/*.h)
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))

# the generated sources, made by the rules above in a make of their own with BUILD=$(FUZZ_BUILD)
ifneq ($(BUILD),$(FUZZ_BUILD))
$(FUZZ_GEN_SRC) $(FUZZ_BUILD)/gen/lt_ops.h &: tools/gen.lua tools/embed.lua $(OPS_DECL) $(EMBED_LUA)
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) $(FUZZ_GEN_SRC) $(FUZZ_BUILD)/gen/lt_ops.h
endif
$(FUZZ_BUILD)/fobj/gen/%.o: $(FUZZ_BUILD)/gen/%.c $(FUZZ_BUILD)/gen/lt_ops.h
	@mkdir -p $(dir $@)
	@echo "  FUZZCC $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_BUILD)/fobj/%.o: %.c $(FUZZ_HDRS) $(FUZZ_BUILD)/gen/lt_ops.h
	@mkdir -p $(dir $@)
	@echo "  FUZZCC $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_BUILD)/fobj/fuzz/fuzz_lua.o: fuzz/fuzz_lua.h
$(FUZZ_BUILD)/liblutorch-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	@echo "  AR $@"
	@ar rcs $@ $^
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_BUILD)/fobj/fuzz/fuzz_lua.o $(FUZZ_BUILD)/liblutorch-fuzz.a
	@echo "  FUZZLD $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/fobj/fuzz/fuzz_lua.o \
	  $(FUZZ_BUILD)/liblutorch-fuzz.a $(LIBS) $(LUA_LIBS) -Wl,-E

fuzz-build: fuzz-deps $(FUZZ_BINS)
# one target at a time, one job each (the machine is shared); the corpus grows in $(FUZZ_BUILD)
fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-corpus:
	$(LUA) fuzz/make_corpus.lua

# the replay programs: the same harnesses with a main() that runs each file given (no
# libFuzzer, no clang), built with the ordinary compiler into $(BUILD)/fuzz
FUZZ_REPLAYS := $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_TARGETS))
$(BUILD)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/fuzz_lua.c fuzz/fuzz_lua.h $(BUILD)/liblutorch.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ifuzz -DLT_FUZZ_REPLAY -o $@ $< fuzz/fuzz_lua.c $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS) -Wl,-E
test-c: $(FUZZ_REPLAYS)
# clang and libFuzzer (libclang-rt-14-dev) only for make fuzz, fuzz-build and alloc-fail-asan:
# make test replays with the ordinary compiler, so they are not in DEPS_PKGS
FUZZ_PKGS = clang libclang-rt-14-dev
fuzz-deps:
	$(MAKE) deps DEPS_PKGS="$(FUZZ_PKGS)"
.PHONY: fuzz fuzz-build fuzz-corpus fuzz-deps
# ---- end of fuzz ----

# ---- alloc-fail: allocation-failure injection (tests/c/test_alloc_fail.c) ----
# The test fails every allocation from the Nth on, for its Lua state (its own lua_Alloc) and
# for lutorch's own code: liblutorch.a is linked with the linker's --wrap for each allocation
# function, so the library carries no hook. make test runs it; make asan runs it under
# LeakSanitizer. LT_ALLOC_FAIL_MAX bounds the points per operation, LT_ALLOC_FAIL_ONLY=NAME
# sweeps one operation.
ALLOC_FAIL_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=posix_memalign \
                  -Wl,--wrap=strdup,--wrap=strndup,--wrap=mmap
$(BUILD)/tests/test_alloc_fail: CFLAGS += $(ALLOC_FAIL_WRAP)
$(BUILD)/tests/test_alloc_fail: tests/c/alloc_fail_cases.lua
# the same test under AddressSanitizer, LeakSanitizer and UBSan, linked with the fuzz build's
# instrumented library (clang; make fuzz-build makes the library): make alloc-fail-asan.
# tests/sh/test_fuzz.sh runs it in make test where it is built. (make asan runs the gcc one.)
$(FUZZ_BUILD)/test_alloc_fail: tests/c/test_alloc_fail.c tests/c/ctest.h $(FUZZ_BUILD)/liblutorch-fuzz.a
	@echo "  FUZZLD $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/c $(ALLOC_FAIL_WRAP) -o $@ $< $(FUZZ_BUILD)/liblutorch-fuzz.a $(LIBS) $(LUA_LIBS)
alloc-fail-asan: $(FUZZ_BUILD)/test_alloc_fail
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ./$(FUZZ_BUILD)/test_alloc_fail
fuzz-build: $(FUZZ_BUILD)/test_alloc_fail
.PHONY: alloc-fail-asan
# ---- end of alloc-fail ----

# ---- soak: a long training run watched for growth (tests/soak/soak.sh; not in make test) ----
# SOAK_SECONDS (default 240) of training with DataLoader workers and checkpoints, a SIGINT
# halfway (caught: save, resume), RSS, descriptors and children sampled from /proc.
soak: all
	@BUILD=$(BUILD) sh tests/soak/soak.sh
.PHONY: soak
# ---- end of soak ----
