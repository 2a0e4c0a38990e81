# lutorch — GNU make build.
#   make          build/lutorch, build/liblutorch.{a,so}, build/torch.so
#   make run      install missing packages, build, start lutorch
#   make test     install missing packages, build, run every test
#   make asan     the test suite under AddressSanitizer + UBSan
#   make bench    benchmarks side by side with PyTorch (by hand; see bench/README.md)
#   make deps     install missing Debian packages (no-op when all are present)

BUILD ?= build
CC ?= gcc
OPT ?= -O2 -march=native
SAN ?=
DEPS_PKGS = gcc make pkg-config lua5.4 liblua5.4-dev libopenblas-dev libreadline-dev zlib1g-dev \
            libjansson-dev libzip-dev libopenmpi-dev openmpi-bin \
            python3-numpy python3-torch time dataset-fashion-mnist gnuplot-nox fortunes
PKG_CFLAGS := $(shell pkg-config --cflags lua5.4 openblas jansson libzip 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs openblas jansson libzip 2>/dev/null)
LUA_LIBS := $(shell pkg-config --libs lua5.4 2>/dev/null)
CFLAGS_BASE = -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
              -D_GNU_SOURCE -fno-math-errno $(PKG_CFLAGS) -I$(BUILD)/gen -Isrc $(SAN)
CFLAGS += $(CFLAGS_BASE)
LIBS = $(PKG_LIBS) -lz -lpthread -lm -ldl
LUA = lua5.4

CORE_SRC := $(wildcard src/tensor/*.c) $(wildcard src/dispatch/*.c) $(wildcard src/autograd/*.c) \
            $(wildcard src/serial/*.c)
# the REPL is the program's, not the library's
REPL_SRC := $(wildcard src/repl/*.c)
VM_SRC := $(filter-out src/vm/lutorch.c,$(wildcard src/vm/*.c))
OPS_DECL := $(sort $(wildcard src/ops/*.lua))
EMBED_LUA := $(sort $(wildcard src/vm/lua/*.lua))
GEN_SRC := $(BUILD)/gen/lt_ops.c $(BUILD)/gen/lua_ops.c $(BUILD)/gen/embedded.c
OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC) $(VM_SRC)) \
       $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_SRC))
HDRS := $(wildcard src/*/*.h) $(BUILD)/gen/lt_ops.h

all: $(BUILD)/lutorch $(BUILD)/liblutorch.a $(BUILD)/liblutorch.so $(BUILD)/torch.so

$(BUILD)/gen/lt_ops.h $(BUILD)/gen/lt_ops.c $(BUILD)/gen/lua_ops.c $(BUILD)/gen/ops.md &: tools/gen.lua $(OPS_DECL)
	@mkdir -p $(BUILD)/gen
	$(LUA) tools/gen.lua $(BUILD)/gen $(OPS_DECL)

$(BUILD)/gen/embedded.c: tools/embed.lua $(EMBED_LUA)
	@mkdir -p $(BUILD)/gen
	$(LUA) tools/embed.lua $@ $(EMBED_LUA)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) -c $< -o $@

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

$(BUILD)/lutorch: $(BUILD)/obj/src/vm/lutorch.o $(patsubst %.c,$(BUILD)/obj/%.o,$(REPL_SRC)) $(OBJ)
	@echo "  LD $@"
	@$(CC) $(SAN) -o $@ $^ $(LIBS) $(LUA_LIBS) -lreadline -Wl,-E

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

test: deps
	$(MAKE) all
	$(MAKE) test-c
	@BUILD=$(BUILD) sh tests/run.sh

# C unit tests: each tests/c/test_*.c links against the static library
CTESTS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(wildcard tests/c/test_*.c))
$(BUILD)/tests/%: tests/c/%.c $(BUILD)/liblutorch.a tests/c/ctest.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -Isrc/tensor -o $@ $< $(BUILD)/liblutorch.a $(LIBS) $(LUA_LIBS)

test-c: $(CTESTS)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" all test-c
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  LUTORCH_SANITIZE=1 BUILD=build-asan sh tests/run.sh

bench: all
	sh bench/run.sh

clean:
	rm -rf $(BUILD) build-asan

.PHONY: all deps run test test-c asan bench clean
