#!/bin/sh
# test_cuda_fake.sh — tests/lua/test_cuda_fake.lua under the fake CUDA driver. The driver is
# chosen once per process from LUTORCH_CUDA_DRIVER, before the backend module loads, and Lua
# cannot set the environment, so this wrapper exports it (tests/run.sh also runs the Lua file
# on its own, without a driver). Run by tests/run.sh as `BUILD=dir sh tests/sh/test_cuda_fake.sh`;
# prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
LUTORCH_CUDA_DRIVER=fake LUA_PATH="tests/lua/?.lua;lib/?.lua;lib/?/init.lua;;" \
  exec timeout 300 "$BUILD/lutorch" tests/lua/test_cuda_fake.lua
