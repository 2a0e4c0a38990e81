#!/bin/sh
# deb_check.sh — the Debian packages on a clean machine (issue 26). Not part of `make test`:
# it builds the packages (minutes) and a Debian root with debootstrap (a download of ~100 MB).
#   make deb && sh tests/pkg/deb_check.sh [DEB_DIR] [CHROOT]
# 1. lintian on the .debs: no errors (warnings are listed);
# 2. a minimal bookworm made by debootstrap (kept in CHROOT, default /var/tmp/lutorch-chroot,
#    and reused), the .debs installed there with apt-get from the files, nothing else of this
#    machine visible; then, from / and from an empty folder: the REPL, a training example,
#    the stock lua5.4 with require "torch", the help, a C program built against
#    liblutorch-dev with pkg-config (when the chroot has gcc: CHROOT_GCC=1 installs it).
# Needs root (chroot, mount). Prints "N passed, M failed".
DEB_DIR=${1:-build/deb}
CH=${2:-/var/tmp/lutorch-chroot}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
cd "$(dirname "$0")/../.." || exit 1
passed=0; failed=0
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/  /' >&2; }
check()    { if [ "$2" = "$3" ]; then ok; else bad "$1" "expected [$2], got [$3]"; fi; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish()   { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

set -- "$DEB_DIR"/*.deb
[ -f "$1" ] || { bad "no .deb in $DEB_DIR (run make deb first)"; finish; }
for p in lutorch liblutorch0 liblutorch-dev lua-lutorch lutorch-common; do
  ls "$DEB_DIR"/${p}_*.deb >/dev/null 2>&1 && ok || bad "package $p built"
done

# 1. lintian
if command -v lintian >/dev/null; then
  out=$(lintian --no-tag-display-limit "$DEB_DIR"/*.deb 2>&1)
  errs=$(printf '%s\n' "$out" | grep -c '^E:')
  check "lintian: no errors" 0 "$errs"
  [ "$errs" -eq 0 ] || printf '%s\n' "$out" | grep '^E:' >&2
  printf '%s\n' "$out" | grep '^W:' | sed 's/^/    lintian /'
else
  echo "SKIP lintian: not installed (apt-get install lintian)"
fi

# 2. a clean bookworm
[ "$(id -u)" = 0 ] || { echo "SKIP the clean-machine install: needs root"; finish; }
command -v debootstrap >/dev/null || { echo "SKIP the clean-machine install: no debootstrap"; finish; }
if [ ! -x "$CH/usr/bin/apt-get" ]; then
  rm -rf "$CH"
  if ! debootstrap --variant=minbase bookworm "$CH" "$MIRROR" >/tmp/deb_check_debootstrap.log 2>&1; then
    bad "debootstrap" "$(tail -5 /tmp/deb_check_debootstrap.log)"; finish
  fi
  cp /etc/resolv.conf "$CH/etc/resolv.conf" 2>/dev/null
  echo "deb $MIRROR bookworm main" > "$CH/etc/apt/sources.list"
fi
# /proc, and /dev/pts for the REPL's terminal (script(1))
mount -t proc proc "$CH/proc" 2>/dev/null && mounts="$CH/proc"
mkdir -p "$CH/dev/pts" && mount --bind /dev/pts "$CH/dev/pts" 2>/dev/null && mounts="$CH/dev/pts $mounts"
[ -e "$CH/dev/ptmx" ] || ln -s pts/ptmx "$CH/dev/ptmx"
trap 'for m in $mounts; do umount "$m"; done' EXIT
in_ch() { chroot "$CH" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$1" 2>&1; }

# a previous run's packages go first, so this run installs the new ones from scratch
in_ch "dpkg --purge lutorch lua-lutorch liblutorch-dev liblutorch0 lutorch-common" >/dev/null
rm -rf "$CH/tmp/debs" && mkdir -p "$CH/tmp/debs" && for f in "$DEB_DIR"/*.deb; do case "$f" in *-dbgsym_*) ;; *) cp "$f" "$CH/tmp/debs/" ;; esac; done
out=$(in_ch "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/debs/*.deb")
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "apt-get install ./*.deb" "$(printf '%s\n' "$out" | tail -15)"; finish; fi

mkdir -p "$CH/tmp/empty"
for d in / /tmp/empty; do
  out=$(in_ch "cd $d && lutorch -e 'print(torch.ones(4):sum():item())'")
  check "lutorch runs from $d" "4.0" "$out"
  # the REPL wants a terminal: script(1) (bsdutils, essential) gives it one
  out=$(in_ch "cd $d && printf 'x = torch.ones(2, 3)\\nx:sum()\\nos.exit(0)\\n' | script -qec 'lutorch -q' /dev/null")
  contains "the REPL from $d" "tensor(6.)" "$out"
  out=$(in_ch "cd $d && lua5.4 -e 'local torch = require \"torch\"; local nn = require \"nn\"; print(nn.Linear(4, 2)(torch.ones(1, 4)):size(2))'")
  check "stock lua5.4: require torch and nn from $d" "2" "$out"
done
ex=$(in_ch "ls /usr/share/doc/lutorch/examples/")
contains "examples installed" "regression.lua" "$ex"
out=$(in_ch "cd /tmp/empty && lutorch /usr/share/doc/lutorch/examples/regression.lua --steps 100")
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "a training example runs" "$out"; fi
out=$(in_ch "lutorch -e 'print(torch.help(\"nn.Linear\"))'")
contains "help reads the installed manual" "Linear" "$out"
out=$(in_ch "man -w lutorch 2>/dev/null || ls /usr/share/man/man1/lutorch.1*")
contains "lutorch(1) installed" "lutorch.1" "$out"
out=$(in_ch "pkg-config --modversion lutorch 2>/dev/null || cat /usr/lib/pkgconfig/lutorch.pc")
contains "lutorch.pc installed" "0.1.0" "$out"
if [ -n "$CHROOT_GCC" ]; then
  in_ch "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc pkg-config" >/dev/null
  cp examples/embed/*.c "$CH/tmp/" 2>/dev/null
  src=$(cd examples/embed && ls *.c | head -1)
  out=$(in_ch "cd /tmp && gcc -o embed_ex $src \$(pkg-config --cflags --libs lutorch) && echo built")
  contains "a C program built against liblutorch-dev" "built" "$out"
fi
finish
