#!/bin/sh
# startup.sh — how fast lutorch starts and how much memory it takes: `lutorch -e ''`
# and the REPL up to its first prompt, beside Debian's `python3 -c 'import torch'`.
# Each run is timed from fork to exit (or to the prompt) and its peak RSS read with
# /usr/bin/time -f %M; runs alternate between the programs, pinned to one core.
#   sh bench/startup.sh [BUILD] [RUNS]       (defaults: build 20; python runs RUNS/4)
BUILD=${1:-build}
RUNS=${2:-20}
cd "$(dirname "$0")/.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
[ -x "$BUILD/lutorch" ] || { echo "startup.sh: $BUILD/lutorch is not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "startup.sh: /usr/bin/time is needed (Debian package time)" >&2; exit 1; }
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 1"
exec /usr/bin/python3 - "$BUILD/lutorch" "$RUNS" "$PIN" <<'EOF'
import os, pty, select, statistics, subprocess, sys, tempfile, time

lutorch, runs, pin = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
tmp = tempfile.mkdtemp(prefix="lt_startup_")
rss_file = os.path.join(tmp, "rss")
env = dict(os.environ, HOME=tmp, LUTORCH_HISTORY="", NO_COLOR="1", TERM="xterm")
env.pop("LUTORCH_INIT", None)

def timed(argv):
    """wall seconds from fork to exit, peak RSS in KiB"""
    cmd = pin + ["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t0
    return t, int(open(rss_file).read().split()[-1])

def repl():
    """wall seconds from fork to the first prompt on a terminal, peak RSS in KiB"""
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(pin[0] if pin else "/usr/bin/time",
                   pin + ["/usr/bin/time", "-f", "%M", "-o", rss_file, lutorch, "-q"], env)
    buf, t = b"", None
    while t is None:
        r, _, _ = select.select([fd], [], [], 10)
        if not r:
            raise SystemExit("no prompt within 10 s")
        buf += os.read(fd, 4096)
        if b"> " in buf:
            t = time.perf_counter() - t0
    os.write(fd, b"\x04")
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    os.close(fd)
    return t, int(open(rss_file).read().split()[-1])

res = {"lutorch -e ''": [], "lutorch REPL, first prompt": [], "python3 -c 'import torch'": []}
have_torch = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0
for i in range(runs):
    res["lutorch -e ''"].append(timed([lutorch, "-e", ""]))
    res["lutorch REPL, first prompt"].append(repl())
    if have_torch and i % 4 == 0:
        res["python3 -c 'import torch'"].append(timed(["/usr/bin/python3", "-c", "import torch"]))

print("%-30s %5s %12s %12s %14s" % ("", "runs", "median ms", "min ms", "peak RSS MiB"))
for name, v in res.items():
    if not v:
        print("%-30s (not available)" % name)
        continue
    ts = [t for t, _ in v]
    print("%-30s %5d %12.1f %12.1f %14.1f" % (name, len(v), statistics.median(ts) * 1e3, min(ts) * 1e3,
                                               statistics.median([m for _, m in v]) / 1024))
os.remove(rss_file) if os.path.exists(rss_file) else None
os.rmdir(tmp)
EOF
