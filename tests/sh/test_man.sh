#!/bin/sh
# test_man.sh — the manual: every page (generated in $BUILD/man from man/*.md and the op
# declarations, and the hand-written man/*.[137]) renders with no groff warnings and no
# errors from man(1); every man/*.md has its page; every op appears in lutorch-ops(7).
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_man.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
LT="$BUILD/lutorch"
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

if ! command -v groff >/dev/null 2>&1 || ! command -v man >/dev/null 2>&1; then
  echo "SKIP groff or man is not installed (Debian: groff-base, man-db)"
  skipped=1; done_
fi
if [ ! -f "$BUILD/man/lutorch-ops.7" ]; then
  bad "$BUILD/man/lutorch-ops.7 is not built (make man)"; done_
fi

# every chapter has its page: man/tensor.md is lutorch(7), man/X.md lutorch-X(7)
for md in man/*.md; do
  [ -f "$md" ] || continue
  c=$(basename "$md" .md)
  if [ "$c" = tensor ]; then p=lutorch.7; else p="lutorch-$c.7"; fi
  if [ -f "$BUILD/man/$p" ]; then ok; else bad "$md has no page $BUILD/man/$p"; fi
done

# each page: no groff warnings (tbl when the page asks for it, as man does), nothing on man's
# stderr, and no markdown left unconverted
for page in "$BUILD"/man/*.[137] man/*.[137]; do
  [ -f "$page" ] || continue
  name=${page##*/}
  pre=""
  head -n 1 "$page" | grep -q "^'\\\\\" t" && pre="-t"
  warn=$(groff $pre -man -ww -z "$page" 2>&1)
  if [ -z "$warn" ]; then ok; else bad "$name: groff -man -ww warns" "$warn"; fi
  err=$(MANWIDTH=80 man -l "$page" 2>&1 >"$tmp/$name.txt")
  if [ -z "$err" ] && [ -s "$tmp/$name.txt" ]; then ok; else bad "$name: man -l reports errors" "$err"; fi
  case "$page" in
    "$BUILD"/man/*)
      left=$(grep -n '\*\*[^ *][^*]*[^ *]\*\*\|\]([a-z0-9_-]*\.md)\|\](https\?:\|^#\+ ' "$tmp/$name.txt" | head -n 5)
      if [ -z "$left" ]; then ok; else bad "$name: markdown left in the rendered page" "$left"; fi ;;
  esac
done

# every op (each Lua name: ops, aliases, in-place forms) is named in lutorch-ops(7)
if [ -x "$LT" ]; then
  "$LT" -e 'for _, op in ipairs(torch._ops()) do print(op.name) end' 2>&1 | sort -u >"$tmp/ops"
  # words, and dotted names (torch.special.erf counts for special.erf)
  MANWIDTH=200 man -l "$BUILD/man/lutorch-ops.7" 2>/dev/null >"$tmp/ops7"
  { tr -c 'A-Za-z0-9_' '\n' <"$tmp/ops7"; tr -c 'A-Za-z0-9_.' '\n' <"$tmp/ops7" | sed 's/\.*$//; s/^torch\.//'; } |
    sort -u >"$tmp/words"
  n=$(wc -l <"$tmp/ops")
  missing=$(comm -23 "$tmp/ops" "$tmp/words" | tr '\n' ' ')
  if [ "$n" -gt 100 ] && [ -z "$missing" ]; then ok; else bad "ops missing from lutorch-ops(7) ($n ops)" "$missing"; fi
else
  bad "$LT is not built"
fi

# the dtype claims of lutorch-ops(7) hold for the kernels: each op named there, run on each dtype
if [ -x "$LT" ] && command -v lua5.4 >/dev/null 2>&1; then
  lua5.4 tools/man.lua dtypes >"$tmp/dtypes"
  cat >"$tmp/dtypes.lua" <<'EOF'
local DTS = { "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
local ops = {}
for _, op in ipairs(torch._ops()) do ops[op.name] = true end
local wrong, n = {}, 0
for line in io.lines(arg[1]) do
  local name, kind = line:match("^(%S+) (%S+)$")
  if ops[name] and kind ~= "div" then
    n = n + 1
    for _, d in ipairs(DTS) do
      local x = torch.ones(4, { dtype = d })
      local ok, y = pcall(torch[name], x)
      if not ok and tostring(y):find("missing argument") then ok, y = pcall(torch[name], x, torch.ones(4, { dtype = d })) end
      local got = ok and y.dtype.name or "error"
      local want
      if kind == "float_out" then want = FLOAT[d] and d or "float32"
      elseif kind == "float_only" then want = FLOAT[d] and d or "error"
      elseif kind == "bool_out" then want = "bool"
      elseif kind == "int_bool_only" then want = FLOAT[d] and "error" or d
      elseif kind == "int_only" then want = (FLOAT[d] or d == "bool") and "error" or d
      elseif kind == "no_bool" then want = d == "bool" and "error" or d end
      if got ~= want then wrong[#wrong + 1] = ("%s(%s): %s, manual says %s"):format(name, d, got, want) end
    end
  end
end
print(#wrong == 0 and n > 50 and "ok" or (n .. " ops checked\n" .. table.concat(wrong, "\n")))
EOF
  out=$("$LT" "$tmp/dtypes.lua" "$tmp/dtypes" 2>&1)
  if [ "$out" = ok ]; then ok; else bad "dtype claims in lutorch-ops(7) differ from the kernels" "$out"; fi
fi

# the overview lists every chapter under SEE ALSO
see=$(MANWIDTH=200 man -l "$BUILD/man/lutorch.7" 2>/dev/null | sed -n '/^SEE ALSO/,$p')
for md in man/*.md; do
  c=$(basename "$md" .md)
  [ "$c" = tensor ] && continue
  case "$see" in *"lutorch-$c(7)"*) ok ;; *) bad "lutorch(7) SEE ALSO lacks lutorch-$c(7)" ;; esac
done

done_
