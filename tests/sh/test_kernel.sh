#!/bin/sh
# test_kernel.sh — the Jupyter kernel with a real client: --install-kernel writes the
# kernelspec; tests/kernel_client.py starts the kernel from it (in a temporary JUPYTER_PATH)
# and checks results, streams, errors, display_data, gnuplot's inline PNG, completion,
# inspection, is_complete, input, an interrupt, a restart, and that wrongly signed and
# unsigned messages are dropped; every examples/notebooks/*.ipynb runs under
# `jupyter nbconvert --execute` and its outputs match the stored ones.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_kernel.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
LT="$BUILD/lutorch"
PY=/usr/bin/python3
passed=0; failed=0; skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/  /' >&2; }
done_() {
  if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
  else echo "$passed passed, $failed failed"; fi
  [ "$failed" -eq 0 ]; exit
}
# adds the "N passed, M failed" of a driver's output to the counts
tally() {
  out=$1; rc=$2; what=$3
  printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$' >&2
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  if [ -z "$line" ]; then bad "$what gave no result (status $rc)"; return; fi
  p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && bad "$what exited $rc"
}

if [ ! -x "$LT" ]; then bad "$LT is not built"; done_; fi

if ! "$LT" --install-kernel --prefix "$tmp/jp" >"$tmp/install.txt" 2>&1; then
  if grep -q "without ZeroMQ" "$tmp/install.txt"; then
    echo "SKIP the kernel is not built (no libzmq: apt-get install libzmq3-dev)"; skipped=1; done_
  fi
  bad "lutorch --install-kernel --prefix failed" "$(cat "$tmp/install.txt")"; done_
fi

# ---- the kernelspec ----
spec="$tmp/jp/share/jupyter/kernels/lutorch/kernel.json"
if [ -f "$spec" ]; then ok; else bad "--install-kernel --prefix wrote no $spec"; done_; fi
for want in "\"$LT\"" '"--kernel"' '"{connection_file}"' '"display_name": "Lutorch"' '"language": "lua"' \
            '"interrupt_mode": "signal"'; do
  if grep -qF "$want" "$spec"; then ok; else bad "kernel.json lacks $want" "$(cat "$spec")"; fi
done
JUPYTER_DATA_DIR="$tmp/user" "$LT" --install-kernel --user >/dev/null 2>&1
if [ -f "$tmp/user/kernels/lutorch/kernel.json" ]; then ok; else bad "--install-kernel --user ignores JUPYTER_DATA_DIR"; fi
if "$LT" --install-kernel --bogus >/dev/null 2>"$tmp/err.txt"; then bad "--install-kernel --bogus succeeds"
elif grep -q "unknown argument '--bogus'" "$tmp/err.txt"; then ok; else bad "--install-kernel --bogus: no message" "$(cat "$tmp/err.txt")"; fi
if "$LT" --kernel 2>"$tmp/err.txt"; then bad "--kernel without a connection file succeeds"
elif grep -q "connection file" "$tmp/err.txt"; then ok; else bad "--kernel alone: no message" "$(cat "$tmp/err.txt")"; fi
if timeout 10 "$LT" --kernel -f "$tmp/none.json" 2>"$tmp/err.txt"; then bad "--kernel -f MISSING succeeds"
elif grep -q "cannot read the connection file" "$tmp/err.txt"; then ok; else bad "--kernel -f MISSING: no message" "$(cat "$tmp/err.txt")"; fi

# ---- a session with the real client ----
if ! "$PY" -c 'import jupyter_client, zmq' 2>/dev/null; then
  echo "SKIP the client cases: $PY has no jupyter_client (Debian: python3-jupyter-client)"
  skipped=$((skipped + 1)); done_
fi
export JUPYTER_PATH="$tmp/jp/share/jupyter" JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_DATA_DIR="$tmp/data"
export JUPYTER_CONFIG_DIR="$tmp/config" JUPYTER_PLATFORM_DIRS=1
out=$(timeout 90 "$PY" tests/kernel_client.py session 2>&1); rc=$?
tally "$out" "$rc" "kernel_client.py session"

# ---- the example notebooks, executed headless ----
if ! "$PY" -c 'import nbconvert, nbformat' 2>/dev/null; then
  echo "SKIP the notebooks: $PY has no nbconvert (Debian: jupyter-nbconvert python3-nbformat)"
  skipped=$((skipped + 1)); done_
fi
for nb in examples/notebooks/*.ipynb; do
  [ -f "$nb" ] || continue
  name=$(basename "$nb" .ipynb)
  if timeout 120 "$PY" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=60 \
       --output-dir "$tmp/nb" --output "$name" "$nb" >"$tmp/nbconvert.txt" 2>&1; then
    ok
    out=$("$PY" tests/kernel_client.py compare "$nb" "$tmp/nb/$name.ipynb" 2>&1); rc=$?
    tally "$out" "$rc" "the comparison of $nb"
  else
    bad "jupyter nbconvert --execute $nb" "$(tail -n 20 "$tmp/nbconvert.txt")"
  fi
done

done_
