#!/bin/sh
# test_layers.sh — the layering rules of ARCHITECTURE.md, as the tree must keep them:
# nothing in core, meta, autograd, composite, vm or serial calls a CPU kernel (lt_cpu_*);
# core includes only core headers, meta only core and meta; backends never include each
# other; nothing outside src/cpu includes the CPU's generated kernel header; nothing below
# src/vm includes a Lua header. Each rule names the offending lines when it fails.
# Run by tests/run.sh; prints "N passed, N failed".
cd "$(dirname "$0")/../.." || exit 1
passed=0; failed=0

# rule NAME LINES: pass when LINES is empty
rule() {
  if [ -z "$2" ]; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL $1" >&2; printf '%s\n' "$2" | sed 's/^/  /' >&2; fi
}
incl() { grep -rn '^#include "' "$@" 2>/dev/null; }

rule "no lt_cpu_ call above the backends" \
  "$(grep -rn 'lt_cpu_' src/core src/meta src/autograd src/composite src/vm src/serial src/repl 2>/dev/null)"
rule "src/core includes only src/core" "$(incl src/core | grep -v '#include "core/')"
rule "src/meta includes only src/core and src/meta" "$(incl src/meta | grep -v '#include "core/\|#include "meta/')"
rule "src/cpu does not include src/cuda" "$(incl src/cpu | grep '#include "cuda/')"
rule "src/cuda does not include src/cpu" "$(incl src/cuda | grep '#include "cpu/')"
rule "only src/cpu includes kernels_cpu.h" "$(incl src | grep 'kernels_cpu.h' | grep -v '^src/cpu/')"
rule "only src/cuda includes kernels_cuda.h" "$(incl src | grep 'kernels_cuda.h' | grep -v '^src/cuda/')"
rule "only src/metadev includes kernels_meta.h" "$(incl src | grep 'kernels_meta.h' | grep -v '^src/metadev/')"
rule "src/metadev includes no other backend" "$(incl src/metadev | grep '#include "cpu/\|#include "cuda/')"
rule "no lt_cpu_ call in src/metadev" "$(grep -rn 'lt_cpu_' src/metadev 2>/dev/null)"
rule "autograd, composite and serial include no backend header but the CPU's public face" \
  "$(incl src/autograd src/composite src/serial | grep '#include "cpu/\|#include "cuda/')"
rule "nothing below src/vm includes a Lua header" \
  "$(grep -rn '#include <l\(ua\|auxlib\|ualib\)\.h>' src/core src/meta src/cpu src/metadev src/dispatch src/autograd src/composite src/serial 2>/dev/null)"
rule "in src/cuda only the module's Lua face (lcuda.c) includes a Lua header" \
  "$(grep -rn '#include <l\(ua\|auxlib\|ualib\)\.h>' src/cuda 2>/dev/null | grep -v '^src/cuda/lcuda.c:')"
rule "no source file left in the old src/tensor" "$(ls src/tensor 2>/dev/null)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
