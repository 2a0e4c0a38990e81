#!/usr/bin/python3
"""repl_pty.py — drives lutorch's REPL through a pseudo terminal, as a user
would: keys in, screen text out. Run by tests/sh/test_repl.sh:

    /usr/bin/python3 tests/repl_pty.py BUILD/lutorch

Every wait has a timeout: a REPL that hangs fails its case (and is killed),
the run goes on. Prints each failure and "N passed, N failed".
"""
import atexit
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import sys
import tempfile
import termios
import time

LUTORCH = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/lutorch")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r|\x07")
PROMPT = "> "


class Timeout(Exception):
    pass


class Repl:
    """one lutorch process on a pty; `out` is what it printed, escapes removed"""

    def __init__(self, args=(), env=None, cwd=None, cols=100):
        self.raw = b""
        self.pos = 0          # expect() searches from here
        pid, fd = pty.fork()
        if pid == 0:
            try:
                if cwd:
                    os.chdir(cwd)
                os.execve(LUTORCH, [LUTORCH] + list(args), env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, cols, 0, 0))
        self.status = None

    @property
    def out(self):
        return ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:       # EIO: the child closed the terminal
            data = b""
        if not data:
            raise EOFError
        self.raw += data
        return True

    def expect(self, pattern, timeout=5.0):
        """waits until `pattern` (a regex) shows up after the last match; returns the match"""
        rx = re.compile(pattern)
        stop = time.monotonic() + timeout
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = stop - time.monotonic()
            if left <= 0:
                raise Timeout("waited %.1fs for %r; screen after the last match:\n%s"
                              % (timeout, pattern, self.out[self.pos:][-1500:]))
            try:
                self._read(min(left, 0.2))
            except EOFError:
                raise Timeout("lutorch exited while waiting for %r; its output:\n%s"
                              % (pattern, self.out[self.pos:][-1500:]))

    def prompt(self, timeout=5.0):
        return self.expect(r"(?m)^> $", timeout)

    def send(self, s):
        os.write(self.fd, s.encode() if isinstance(s, str) else s)

    def cmd(self, line, timeout=5.0):
        """types a line, waits for the next prompt; returns what was printed in between"""
        self.send(line + "\n")
        self.expect(re.escape(line.split("\n")[-1]) + r"\s*\n", timeout)   # the echo
        start = self.pos
        m = self.prompt(timeout)
        return self.out[start:m.start()]

    def settle(self, quiet=0.15, timeout=3.0):
        """reads until nothing new arrives for `quiet` seconds"""
        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            try:
                if not self._read(quiet):
                    return
            except EOFError:
                return

    def wait(self, timeout=5.0):
        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = st
                return os.waitstatus_to_exitcode(st)
            try:
                self._read(0.05)
            except EOFError:
                pass
        raise Timeout("lutorch did not exit")

    def kill(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.status = -9
        try:
            os.close(self.fd)
        except OSError:
            pass


# ---- the cases ---------------------------------------------------------------

TMP = tempfile.mkdtemp(prefix="lutorch_repl_")
atexit.register(shutil.rmtree, TMP, True)
HIST = os.path.join(TMP, "history")
BASE_ENV = {k: v for k, v in os.environ.items() if k not in ("LUTORCH_INIT", "NO_COLOR")}
BASE_ENV.update(TERM="xterm", LUTORCH_HISTORY=HIST, HOME=TMP, LUTORCH_NUM_THREADS="2", INPUTRC="/dev/null")


def start(args=("-q",), color=False, **env):
    e = dict(BASE_ENV)
    if not color:
        e["NO_COLOR"] = "1"
    e.update(env)
    r = Repl(args, e, cwd=TMP)
    r.prompt(10)
    return r


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def case_printing(r):
    out = r.cmd("x = torch.ones(2, 3)")
    check(out.strip() == "", "an assignment prints nothing, got %r" % out)
    out = r.cmd("x")
    check("tensor([[1., 1., 1.]," in out, "a tensor prints: %r" % out)
    out = r.cmd("1 + 1")
    check(out.strip() == "2", "an expression prints its value: %r" % out)
    out = r.cmd("torch.ones(3);")
    check(out.strip() == "", "a trailing ; silences: %r" % out)
    out = r.cmd("1, 'a', nil, true")
    check(out.strip() == "1\ta\tnil\ttrue", "several values side by side: %r" % out)
    out = r.cmd("x, x")
    check(re.search(r"tensor\(\[\[1., 1., 1.\],\s+tensor\(\[\[1., 1., 1.\],", out),
          "two tensors side by side: %r" % out)
    out = r.cmd("{3, 1, b = {c = 'x'}, a = 2}")
    check(out.strip() == "{3, 1, a = 2, b = {c = \"x\"}}", "a table pretty-prints sorted: %r" % out)
    out = r.cmd("t = {1}; t.self = t; t")
    check("self = <cycle>" in out, "cycles are marked: %r" % out)
    out = r.cmd("big = {}; for i = 1, 100 do big[i] = i end; big")
    check("... (60 more)" in out, "long tables are cut: %r" % out)
    out = r.cmd("torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())")
    check("(1): Linear(in_features=2, out_features=3, bias=True)" in out, "modules print their tree: %r" % out)


def case_multiline(r):
    r.send("for i = 1, 3 do\n")
    r.expect(r"(?m)^>> ")
    r.send("print(i * 10)\n")
    r.expect(r"(?m)^>> ")
    out = r.cmd("end")
    check(out.split() == ["10", "20", "30"], "a for loop over three lines: %r" % out)
    r.send("f = function(a,\n")
    r.expect(r"(?m)^>> ")
    r.cmd("b) return a + b end")
    out = r.cmd("f(2, 3)")
    check(out.strip() == "5", "a function over two lines: %r" % out)


def case_errors(r):
    out = r.cmd("error('boom')")
    check("boom" in out and "stack traceback" in out, "an error prints message and traceback: %r" % out)
    out = r.cmd("nil + 1")
    check("attempt to perform arithmetic" in out, "a runtime error: %r" % out)
    out = r.cmd("x = = 2")
    check("unexpected symbol" in out or "expected" in out, "a syntax error: %r" % out)
    out = r.cmd("torch.ones(2) + torch.ones(3)")
    check("add" in out or "size" in out or "broadcast" in out, "a tensor error: %r" % out)
    out = r.cmd("40 + 2")
    check(out.strip() == "42", "the session goes on after errors: %r" % out)


def case_complete(r):
    r.send("type(torch.nn.fun\t")
    r.expect("functional")
    out = r.cmd(")")
    check(out.strip() == "table", "torch.nn.fun<TAB> completes to functional: %r" % out)
    r.cmd("y = torch.ones(2)")
    r.send("y:nume\t")
    r.expect(r"numel\(")
    out = r.cmd(")")
    check(out.strip() == "2", "y:nume<TAB> completes the tensor method: %r" % out)
    r.send("torch.opt\t")
    r.expect("optim")
    out = r.cmd(".SGD ~= nil")
    check(out.strip() == "true", "lazily loaded torch.optim completes: %r" % out)
    r.cmd("lin = torch.nn.Linear(2, 2)")
    r.send("lin:zero_gr\t")
    r.expect(r"zero_grad\(")
    out = r.cmd(")")
    check(out.strip() == "", "module methods through the class chain: %r" % out)
    r.cmd("myveryuniqueglobal = 7")
    r.send("myveryuniq\t")
    r.expect("myveryuniqueglobal")
    out = r.cmd("")
    check(out.strip() == "7", "globals complete: %r" % out)
    open(os.path.join(TMP, "uniquefile_abc.txt"), "w").close()
    r.send('io.open("uniquef\t')
    r.expect("uniquefile_abc.txt")
    out = r.cmd(") ~= nil")
    check(out.strip() == "true", "file names complete inside a string: %r" % out)
    os.mkdir(os.path.join(TMP, "subdir_xyz"))
    open(os.path.join(TMP, "subdir_xyz", "inner_file.txt"), "w").close()
    r.send("io.open('%s/subdir_x\t" % TMP)
    r.expect("subdir_xyz/")
    r.send("inner\t")
    r.expect("inner_file.txt")
    out = r.cmd(") ~= nil")
    check(out.strip() == "true", "absolute paths complete, directory by directory: %r" % out)


def case_help(r):
    out = r.cmd("?")
    check("? name" in out and "who()" in out, "? alone says how to get help: %r" % out)
    out = r.cmd("? add")
    check("add(Tensor self" in out, "? add shows the reference: %r" % out)
    out = r.cmd("help(torch.matmul)")
    check("matmul" in out and "help:" not in out, "help(fn): %r" % out)


def case_shell_who_timing(r):
    out = r.cmd("$ echo hi")
    check(out.strip() == "hi", "$ runs a shell command: %r" % out)
    r.cmd("a_number = 3")
    r.cmd("a_tensor = torch.zeros(4, 5)")
    out = r.cmd("who()")
    check(re.search(r"a_number\s+integer\s+3", out) and re.search(r"a_tensor\s+tensor\s+float32 \[4, 5\]", out),
          "who() lists user globals: %r" % out)
    check("torch" not in out and "print" not in out, "who() leaves out the standard globals: %r" % out)
    out = r.cmd(":timing on")
    out = r.cmd("1")
    check(re.search(r"\(\d+(\.\d+)? (us|ms|s)\)", out), ":timing on prints the time: %r" % out)
    r.cmd(":timing off")
    out = r.cmd("1")
    check(out.strip() == "1", ":timing off: %r" % out)


def case_interrupt_lua(r):
    r.send("while true do end\n")
    r.expect(r"while true do end\s*\n")
    time.sleep(0.3)
    r.send("\x03")
    r.expect("interrupted", 5)
    r.prompt(5)
    out = r.cmd("1 + 2")
    check(out.strip() == "3", "usable after Ctrl-C: %r" % out)


def case_interrupt_c(r):
    # long C kernels (about 0.1 s each): the Ctrl-C lands inside one
    r.cmd("xs = torch.rand(4000000)")
    r.send("for i = 1, 10000 do ys = xs:erfinv() end\n")
    r.expect(r"end\s*\n")
    time.sleep(0.5)
    r.send("\x03")
    r.expect("interrupted", 10)
    r.prompt(5)
    out = r.cmd("torch.ones(3):sum()")
    check("tensor(3.)" in out, "C ops work after an interrupt: %r" % out)
    out = r.cmd("(xs:erfinv() - xs:erfinv()):abs():max()")
    check("tensor(0.)" in out, "and give whole results: %r" % out)


def case_interrupt_one_op(r):
    # one elementwise op of several seconds (4e7 erfinv: ~4 s on one core): the Ctrl-C
    # stops it between slices of the loop, not after it
    r.cmd("nthr = torch.get_num_threads(); torch.set_num_threads(1); big = torch.rand(40000000)")
    r.send("t0 = os.time(); y = big:erfinv()\n")
    time.sleep(0.5)
    t = time.time()
    r.send("\x03")
    r.expect("interrupted", 10)
    r.prompt(5)
    took = time.time() - t
    check(took < 1.5, "one long op stops soon after Ctrl-C: %.2f s" % took)
    out = r.cmd("big = nil; y = nil; collectgarbage(); torch.set_num_threads(nthr); torch.tensor({0.5}):erfinv()")
    check("0.4769" in out, "ops work after it: %r" % out)


def case_ctrl_c_prompt(r):
    r.send("this line goes away")
    r.expect("goes away")
    r.send("\x03")
    r.prompt()
    out = r.cmd("5")
    check(out.strip() == "5", "Ctrl-C at the prompt clears the line: %r" % out)
    r.send("for i = 1, 2 do\n")
    r.expect(r"(?m)^>> ")
    r.send("\x03")
    r.prompt()
    out = r.cmd("6")
    check(out.strip() == "6", "Ctrl-C on a second prompt drops the command: %r" % out)


def case_history():
    if os.path.exists(HIST):
        os.remove(HIST)
    r = start()
    r.cmd("hist_value = 41")
    r.send("for i = 1, 1 do\n")
    r.expect(r"(?m)^>> ")
    r.cmd("hist_value = hist_value + 1 end")
    r.send(":quit\n")
    check(r.wait() == 0, ":quit exits 0")
    r.kill()
    text = open(HIST).read()
    check("hist_value = 41" in text, "the history file has the commands: %r" % text)
    r = start()
    r.send("\x1b[A\x1b[A\x1b[A\n")   # up thrice: the first command (then the loop, :quit)
    r.prompt()
    r.send("\x1b[A\x1b[A\x1b[A\n")   # up thrice: the two-line loop, as one entry
    r.prompt()
    out = r.cmd("hist_value")
    check(out.strip() == "42", "history read back, multi-line entries whole: %r" % out)
    r.send("\x04")
    check(r.wait() == 0, "Ctrl-D exits 0")
    r.kill()
    r = start(LUTORCH_HISTORY_SIZE="3")
    for i in range(6):
        r.cmd("h%d = %d" % (i, i))
    r.send(":q\n")
    r.wait()
    r.kill()
    entries = [l for l in open(HIST).read().splitlines() if not l.startswith("#")]
    check(len(entries) <= 3 and entries[-1] == ":q", "LUTORCH_HISTORY_SIZE limits the file: %r" % entries)


def case_color():
    r = start(color=True, args=())
    raw = r.raw
    r.send("\x04")
    r.wait()
    r.kill()
    check(b"\x1b[1mlutorch" in raw and b"CUDA: " in raw, "the banner, coloured: %r" % raw[:300])
    r = start(color=False, args=())
    raw = r.raw
    r.send("\x04")
    r.wait()
    r.kill()
    check(b"lutorch" in raw and b"\x1b[1m" not in raw and b"\x1b[32m" not in raw,
          "NO_COLOR: no colours: %r" % raw[:300])


def case_init():
    init = os.path.join(TMP, "init.lua")
    with open(init, "w") as f:
        f.write("from_init_file = 11\n")
    r = start(LUTORCH_INIT="@" + init)
    out = r.cmd("from_init_file")
    check(out.strip() == "11", "LUTORCH_INIT=@file runs: %r" % out)
    r.kill()
    r = start(LUTORCH_INIT="from_init_code = 12")
    out = r.cmd("from_init_code")
    check(out.strip() == "12", "LUTORCH_INIT=code runs: %r" % out)
    r.kill()
    script = os.path.join(TMP, "script.lua")
    with open(script, "w") as f:
        f.write("from_script = 13\n")
    r = start(args=("-q", "-i", script))
    out = r.cmd("from_script")
    check(out.strip() == "13", "-i after a script enters the REPL: %r" % out)
    r.kill()


SESSION_CASES = [case_printing, case_multiline, case_errors, case_complete, case_help,
                 case_shell_who_timing, case_interrupt_lua, case_interrupt_c, case_interrupt_one_op, case_ctrl_c_prompt]
ALONE_CASES = [case_history, case_color, case_init]


def main():
    passed = failed = 0

    def run(name, fn, *a):
        nonlocal passed, failed
        try:
            fn(*a)
            passed += 1
        except (AssertionError, Timeout) as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))

    try:
        r = start()
        for fn in SESSION_CASES:
            if r.status is not None:
                r = start()
            before = failed
            run(fn.__name__, fn, r)
            if failed > before:   # a fresh session for the next case
                r.kill()
                r = start()
                continue
            try:
                r.settle(0.05, 0.5)
            except Exception:
                pass
        r.send(":quit\n")
        try:
            r.wait()
        except Timeout:
            pass
        r.kill()
        for fn in ALONE_CASES:
            run(fn.__name__, fn)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
