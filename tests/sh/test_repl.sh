#!/bin/sh
# test_repl.sh — the REPL driven through a pseudo terminal (tests/repl_pty.py:
# printing, `;`, multi-line input, completion, history, `?` help, `$`, who(),
# :timing, Ctrl-C in a Lua loop and in C kernels, errors, NO_COLOR,
# LUTORCH_INIT), and lutorch(1) free of groff warnings.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_repl.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
LT="$BUILD/lutorch"
passed=0; failed=0; skipped=0

if [ ! -x "$LT" ]; then
  echo "FAIL $LT is not built" >&2
  echo "0 passed, 1 failed"; exit 1
fi
export LUA_PATH="$PWD/lib/?.lua;$PWD/lib/?/init.lua;;"

# the pty cases (each wait in them has its own timeout; this one bounds the whole run)
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pty, termios' 2>/dev/null; then
  out=$(timeout 120 /usr/bin/python3 tests/repl_pty.py "$LT" 2>&1); rc=$?
  printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$' >&2
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  if [ -z "$line" ]; then
    echo "FAIL repl_pty.py gave no result (status $rc)" >&2
    failed=$((failed + 1))
  else
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { echo "FAIL repl_pty.py exited $rc" >&2; failed=$((failed + 1)); }
  fi
else
  echo "SKIP the pty cases: /usr/bin/python3 with the pty module is not available" >&2
  skipped=$((skipped + 1))
fi

# lutorch(1): groff warnings are failures
if command -v groff >/dev/null 2>&1; then
  warn=$(groff -man -ww -z man/lutorch.1 2>&1)
  if [ -z "$warn" ]; then passed=$((passed + 1)); else echo "FAIL groff warns on man/lutorch.1: $warn" >&2; failed=$((failed + 1)); fi
  warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l man/lutorch.1 2>&1 >/dev/null)
  if [ -z "$warn" ]; then passed=$((passed + 1)); else echo "FAIL man -l man/lutorch.1 warns: $warn" >&2; failed=$((failed + 1)); fi
else
  echo "SKIP man/lutorch.1: groff is not installed" >&2
  skipped=$((skipped + 1))
fi

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
