#!/bin/sh
# test_licence.sh — the licence as THIRD_PARTY.md states it: GNU readline (GPL-3.0) is linked
# into the lutorch program only; liblutorch.so, torch.so and the modules beside them need no
# readline (nor libhistory) directly (readelf -d) or through another library (ldd). The
# program does link it (so the check would see it where it is). LICENSE is the MIT text and
# the rockspec and the pkg-config file say MIT.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_licence.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
passed=0; failed=0
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '  %s\n' "$2" >&2; }
GPL_LIBS='libreadline\|libhistory'

if ! command -v readelf >/dev/null 2>&1; then
  echo "SKIP readelf not found (binutils)"
else
  for f in liblutorch.so torch.so lutorch_dist.so lutorch_cuda.so; do
    [ -f "$BUILD/$f" ] || { [ "$f" = lutorch_dist.so ] && continue; bad "$BUILD/$f built"; continue; }
    needed=$(readelf -d "$BUILD/$f" | grep '(NEEDED)')
    [ -n "$needed" ] && ok || bad "readelf -d $f lists its libraries"
    hit=$(printf '%s\n' "$needed" | grep "$GPL_LIBS")
    [ -z "$hit" ] && ok || bad "$f links no readline (readelf -d)" "$hit"
    hit=$(ldd "$BUILD/$f" 2>/dev/null | grep "$GPL_LIBS")
    [ -z "$hit" ] && ok || bad "$f needs no readline through another library (ldd)" "$hit"
  done
  # the positive control: the program has it, so the grep above finds it where it is
  if readelf -d "$BUILD/lutorch" | grep '(NEEDED)' | grep -q 'libreadline'; then ok
  else bad "the program links readline (the check's control)" "$(readelf -d "$BUILD/lutorch" | grep NEEDED)"; fi
fi

grep -q '^MIT License$' LICENSE && grep -q 'Copyright (c) 2026 the lutorch authors' LICENSE &&
  grep -q 'THE SOFTWARE IS PROVIDED "AS IS"' LICENSE && ok || bad "LICENSE holds the MIT text"
grep -q 'license = "MIT"' lutorch-*.rockspec && ok || bad "the rockspec says MIT"
grep -q 'MIT' "$BUILD/lutorch.pc" && ok || bad "$BUILD/lutorch.pc says MIT"
for h in include/lutorch.h include/lutorch/extension.h; do
  grep -q 'SPDX-License-Identifier: MIT' "$h" && ok || bad "$h (installed alone) carries the SPDX line"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
