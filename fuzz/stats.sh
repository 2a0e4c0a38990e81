#!/bin/sh
# fuzz/stats.sh [STATS.tsv] — the per-target totals of fuzz/run.sh's runs as a markdown table
# (fuzz/README.md's): seconds and executions summed over runs, cov and ft the largest seen.
f=${1:-${FUZZ_BUILD:-build-fuzz}/stats.tsv}
echo "| target | seconds | executions | exec/s | cov | ft |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F'\t' '{ s[$1] += $2; e[$1] += $3; if ($4 > c[$1]) c[$1] = $4; if ($5 > f[$1]) f[$1] = $5 }
  END { for (t in s) printf "| `%s` | %d | %d | %.0f | %d | %d |\n", t, s[t], e[t], s[t] ? e[t] / s[t] : 0, c[t], f[t] }' "$f" | sort
