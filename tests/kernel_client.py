#!/usr/bin/python3
"""kernel_client.py — drives lutorch's Jupyter kernel with a real client (Debian's
python3-jupyter-client), as tests/sh/test_kernel.sh asks:

    kernel_client.py session            start the kernel from its kernelspec (JUPYTER_PATH)
                                        and check what a notebook relies on
    kernel_client.py compare A B        the outputs of notebook B (executed) against A's
                                        (stored): text equal, images present

Prints "N passed, M failed" (FAIL lines say what) and exits 1 on a failure.
"""
import base64
import json
import sys
import time

passed = 0
failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what + (": " + str(detail) if detail != "" else ""), file=sys.stderr)


def done():
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


# ---- a session --------------------------------------------------------------

def run(kc, code, timeout=20, stdin_hook=None, allow_stdin=False):
    """Executes code; returns (reply content, [iopub messages of this request])."""
    msgs = []
    kw = {}
    if stdin_hook is not None:
        kw["stdin_hook"] = stdin_hook
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=msgs.append,
                                   allow_stdin=allow_stdin, **kw)
    return reply["content"], msgs


def of_type(msgs, t):
    return [m["content"] for m in msgs if m["msg_type"] == t]


def result_text(msgs):
    r = of_type(msgs, "execute_result")
    return r[0]["data"].get("text/plain") if r else None


def stream_text(msgs, name="stdout"):
    return "".join(c["text"] for c in of_type(msgs, "stream") if c["name"] == name)


def rejected_messages(km, kc):
    """A wrongly signed and an unsigned kernel_info_request get no answer; a
    properly signed one afterwards does."""
    import zmq
    from jupyter_client.session import Session
    info = km.get_connection_info()
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect("%s://%s:%d" % (info["transport"], info["ip"], info["shell_port"]))
    time.sleep(0.2)
    good = Session(key=km.session.key, signature_scheme="hmac-sha256")
    for name, bad in (("wrong key", Session(key=b"not-the-key", signature_scheme="hmac-sha256")),
                      ("unsigned", Session(key=b"", signature_scheme="hmac-sha256"))):
        bad.send(sock, "kernel_info_request", {})
        got = sock.poll(1000)
        check(got == 0, "a %s message is dropped (no reply)" % name)
        if got:
            sock.recv_multipart()
    good.send(sock, "kernel_info_request", {})
    check(sock.poll(5000) != 0, "a properly signed message is answered after the rejected ones")
    if sock.poll(0):
        _, msg = good.feed_identities(sock.recv_multipart())
        msg = good.deserialize(msg)
        check(msg["msg_type"] == "kernel_info_reply", "the reply is a kernel_info_reply", msg["msg_type"])
    sock.close()


def session():
    import jupyter_client
    km = jupyter_client.KernelManager(kernel_name="lutorch")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=30)
    except RuntimeError as e:
        check(False, "the kernel starts", e)
        done()
    try:
        body(km, kc)
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=False)
    check(not km.is_alive(), "the kernel exits after shutdown_request")


def body(km, kc):
    # kernel_info
    kc.kernel_info()
    info = kc.get_shell_msg(timeout=10)["content"]
    check(info.get("protocol_version") == "5.3", "protocol_version 5.3", info.get("protocol_version"))
    check(info.get("language_info", {}).get("name") == "lua", "language lua", info.get("language_info"))
    check(info.get("implementation") == "lutorch", "implementation lutorch")

    # results, execution_count, silencing
    rep, msgs = run(kc, "1 + 1")
    check(rep["status"] == "ok" and result_text(msgs) == "2", "1 + 1 gives 2", result_text(msgs))
    n1 = rep["execution_count"]
    check(of_type(msgs, "execute_input") and of_type(msgs, "execute_input")[0]["code"] == "1 + 1", "execute_input on iopub")
    rep, msgs = run(kc, "x = torch.arange(6):view(2, 3)\ny = x * 2\ny:sum()")
    check(rep["execution_count"] == n1 + 1, "execution_count counts cells", (n1, rep["execution_count"]))
    check(result_text(msgs) == "tensor(30)", "the last line's expression is the result", result_text(msgs))
    rep, msgs = run(kc, "y")
    data = of_type(msgs, "execute_result")[0]["data"] if of_type(msgs, "execute_result") else {}
    check("tensor([[ 0,  2,  4]" in data.get("text/plain", ""), "a tensor's text", data.get("text/plain"))
    check("<table" in data.get("text/html", "") and "<td>10</td>" in data.get("text/html", ""),
          "a small tensor has an HTML table", data.get("text/html"))
    rep, msgs = run(kc, "torch.zeros(100, 100)")
    data = of_type(msgs, "execute_result")[0]["data"]
    check("text/html" not in data, "a big tensor has text only")
    rep, msgs = run(kc, "y;")
    check(rep["status"] == "ok" and not of_type(msgs, "execute_result"), "a trailing ; silences the result")
    rep, msgs = run(kc, "local a = 1; a + 41")
    check(result_text(msgs) == "42", "statements; expression", result_text(msgs))
    rep, msgs = run(kc, "1, 'two'")
    check(result_text(msgs) == "1\ttwo", "several values", result_text(msgs))

    # streams
    rep, msgs = run(kc, "print('hello')\nio.write('a', 1, '\\n')\nio.stderr:write('warn\\n');")
    check(stream_text(msgs) == "hello\na1\n", "print and io.write are stdout streams", repr(stream_text(msgs)))
    check(stream_text(msgs, "stderr") == "warn\n", "io.stderr is the stderr stream", repr(stream_text(msgs, "stderr")))
    rep, msgs = run(kc, "for i = 1, 3 do print(i) end")
    check(stream_text(msgs) == "1\n2\n3\n", "a loop's prints", repr(stream_text(msgs)))
    rep, msgs = run(kc, "print('caf\\xc3\\xa9 \\xff')")
    check(stream_text(msgs) == "caf\u00e9 \ufffd\n", "UTF-8 kept, invalid bytes replaced", repr(stream_text(msgs)))
    rep, msgs = run(kc, "$ echo from-the-shell")
    check("from-the-shell" in stream_text(msgs), "$ runs a shell command", repr(stream_text(msgs)))
    rep, msgs = run(kc, "? matmul")
    check("matmul" in stream_text(msgs) and rep["status"] == "ok", "? name prints help", stream_text(msgs)[:80])

    # errors
    rep, msgs = run(kc, "error('boom')")
    errs = of_type(msgs, "error")
    check(rep["status"] == "error" and "boom" in rep.get("evalue", ""), "an error reply", rep)
    check(len(errs) == 1 and errs[0]["ename"] == "LuaError" and any("traceback" in l for l in errs[0]["traceback"]),
          "an error message on iopub with a traceback", errs)
    rep, msgs = run(kc, "torch.ones(2) + torch.ones(3)")
    check(rep["status"] == "error" and "add" in rep.get("evalue", ""), "a torch error names the op", rep.get("evalue"))
    rep, msgs = run(kc, "x = = 1")
    check(rep["status"] == "error" and "syntax" in rep.get("evalue", "").lower() or "expected" in rep.get("evalue", ""),
          "a syntax error", rep.get("evalue"))
    rep, msgs = run(kc, "x:sum()")
    check(rep["status"] == "ok" and result_text(msgs) == "tensor(15)", "the kernel goes on after errors", result_text(msgs))

    # display
    rep, msgs = run(kc, "display(torch.eye(2))\ndisplay({['text/plain'] = 'plain', ['text/html'] = '<b>bold</b>'})")
    dd = of_type(msgs, "display_data")
    check(len(dd) == 2, "display() sends display_data", len(dd))
    if len(dd) == 2:
        check("<table" in dd[0]["data"].get("text/html", "") and "tensor" in dd[0]["data"]["text/plain"],
              "a tensor's display bundle", dd[0]["data"])
        check(dd[1]["data"] == {"text/plain": "plain", "text/html": "<b>bold</b>"}, "a bundle table as is", dd[1]["data"])
    rep, msgs = run(kc, "obj = setmetatable({}, {__index = {_repr_mimebundle_ = function(self) "
                        "return {['image/svg+xml'] = '<svg/>'} end}})\nobj")
    r = of_type(msgs, "execute_result")
    check(r and r[0]["data"].get("image/svg+xml") == "<svg/>" and "text/plain" in r[0]["data"],
          "an object's _repr_mimebundle_ is its result", r)
    rep, msgs = run(kc, "torch.display(1, {colour = 1})")
    check(rep["status"] == "error" and "colour" in rep.get("evalue", ""), "torch.display names a misspelt option",
          rep.get("evalue"))
    rep, msgs = run(kc, "torch._display_hook({['image/png'] = '\\x89PNG\\0bytes'})")
    dd = of_type(msgs, "display_data")
    check(dd and base64.b64decode(dd[0]["data"]["image/png"]) == b"\x89PNG\x00bytes", "binary bundles go as base64")

    # gnuplot inline
    rep, msgs = run(kc, "gnuplot = require 'gnuplot'\nlocal x = torch.linspace(0, 6, 40)\n"
                        "gnuplot.plot({'sin', x, torch.sin(x), '-'})\ngnuplot.title('t')\ngnuplot.xlabel('x');", timeout=30)
    dd = of_type(msgs, "display_data")
    check(rep["status"] == "ok" and len(dd) == 1, "a gnuplot figure is shown once at the end of its cell",
          (rep.get("evalue"), len(dd)))
    if dd:
        png = base64.b64decode(dd[0]["data"].get("image/png", ""))
        check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000, "the figure is a PNG", png[:8])
    rep, msgs = run(kc, "gnuplot.plot(torch.ones(3))\nerror('after the plot')", timeout=30)
    check(rep["status"] == "error" and "after the plot" in rep.get("evalue", "") and len(of_type(msgs, "display_data")) == 1,
          "a figure drawn before an error is shown, the error reported", (rep.get("evalue"), len(of_type(msgs, "display_data"))))
    rep, msgs = run(kc, "gnuplot.plot(nil)")
    check(rep["status"] == "error" and "gnuplot.plot" in rep.get("evalue", ""), "gnuplot's errors name the function",
          rep.get("evalue"))

    # completion, inspection, is_complete
    code = "torch.matm"
    kc.complete(code, len(code))
    c = kc.get_shell_msg(timeout=10)["content"]
    check("matmul(" in c.get("matches", []) and c["cursor_start"] == 6 and c["cursor_end"] == 10,
          "complete torch.matm", c)
    code = "z = torch.ones(2)\nz:resh"
    kc.execute("z = torch.ones(2)", silent=True)
    kc.get_shell_msg(timeout=10)
    kc.complete(code, len(code))
    c = kc.get_shell_msg(timeout=10)["content"]
    check("reshape(" in c.get("matches", []), "complete a method z:resh", c.get("matches"))
    kc.inspect("torch.matmul(x", 12)
    c = kc.get_shell_msg(timeout=10)["content"]
    check(c.get("found") is True and "matmul" in c.get("data", {}).get("text/plain", ""), "inspect torch.matmul",
          c.get("data"))
    kc.inspect("no_such_thing_here", 5)
    c = kc.get_shell_msg(timeout=10)["content"]
    check(c.get("found") is False, "inspect an unknown name: not found", c)
    for code, want in (("for i = 1, 3 do", "incomplete"), ("x = 1", "complete"), ("x = = 1", "invalid"),
                       ("t = {\n1,", "incomplete"), ("x = 1\nx", "complete"), ("? add", "complete")):
        kc.is_complete(code)
        c = kc.get_shell_msg(timeout=10)["content"]
        check(c.get("status") == want, "is_complete %r" % code, c)

    # comm_info
    msg = kc.session.msg("comm_info_request", {})
    kc.shell_channel.send(msg)
    c = kc.get_shell_msg(timeout=10)["content"]
    check(c.get("status") == "ok" and c.get("comms") == {}, "comm_info_request: no comms", c)

    # input
    def answer(msg):
        kc.input("typed words")
    rep, msgs = run(kc, "s = io.read()\ns", stdin_hook=answer, allow_stdin=True)
    check(rep["status"] == "ok" and result_text(msgs) == "typed words", "io.read asks with input_request",
          (rep.get("evalue"), result_text(msgs)))
    rep, msgs = run(kc, "io.read()", allow_stdin=False)
    check(rep["status"] == "error" and "allow_stdin" in rep.get("evalue", ""), "io.read without stdin is an error",
          rep.get("evalue"))

    # the signatures
    rejected_messages(km, kc)

    # the heartbeat echoes
    import zmq
    info = km.get_connection_info()
    hb = zmq.Context.instance().socket(zmq.REQ)
    hb.linger = 0
    hb.connect("%s://%s:%d" % (info["transport"], info["ip"], info["hb_port"]))
    hb.send(b"ping-42")
    check(hb.poll(5000) != 0 and hb.recv() == b"ping-42", "the heartbeat echoes a ping")
    hb.close()

    # interrupt
    msg_id = kc.execute("local n = 0\nwhile true do n = n + 1 end")
    time.sleep(1.0)
    km.interrupt_kernel()
    rep = None
    deadline = time.time() + 15
    while time.time() < deadline:
        m = kc.get_shell_msg(timeout=15)
        if m["parent_header"].get("msg_id") == msg_id:
            rep = m["content"]
            break
    check(rep is not None and rep["status"] == "error" and rep.get("ename") == "KeyboardInterrupt",
          "an interrupt stops a loop with KeyboardInterrupt", rep)
    rep, msgs = run(kc, "x:sum()")
    check(rep["status"] == "ok" and result_text(msgs) == "tensor(15)", "the kernel lives after the interrupt",
          result_text(msgs))

    # restart: a fresh state
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=30)
    rep, msgs = run(kc, "x")
    check(rep["status"] == "ok" and result_text(msgs) == "nil", "after a restart the globals are gone", result_text(msgs))
    check(rep["execution_count"] == 1, "after a restart execution_count starts again", rep["execution_count"])


# ---- comparing notebooks ----------------------------------------------------

def outputs(nb):
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        # a cell tagged nbval-ignore-output (nbval's tag: values that depend on the machine,
        # such as an accuracy after training) is compared by the kinds of its outputs only
        loose = "nbval-ignore-output" in cell.get("metadata", {}).get("tags", [])
        cell_out = []
        for o in cell.get("outputs", []):
            t = o["output_type"]
            if t == "stream":
                cell_out.append(("stream", o["name"], "".join(o["text"]) if isinstance(o["text"], list) else o["text"]))
            elif t in ("execute_result", "display_data"):
                data = o.get("data", {})
                text = data.get("text/plain", "")
                text = "".join(text) if isinstance(text, list) else text
                images = sorted(k for k in data if k.startswith("image/"))
                cell_out.append((t, text, images, [bool(data[k]) for k in images]))
            elif t == "error":
                cell_out.append(("error", o["ename"], o["evalue"]))
        if loose:
            cell_out = [(o[0], o[1], None) if o[0] == "stream" else
                        (o[0], None) + tuple(o[2:]) if o[0] in ("execute_result", "display_data") else o
                        for o in cell_out]
        out.append(cell_out)
    return out


def compare(stored_path, executed_path):
    with open(stored_path) as f:
        stored = json.load(f)
    with open(executed_path) as f:
        executed = json.load(f)
    a, b = outputs(stored), outputs(executed)
    check(len(a) == len(b), "%s: the same number of code cells" % stored_path, (len(a), len(b)))
    images = 0
    for i, (x, y) in enumerate(zip(a, b)):
        check(x == y, "%s: code cell %d's outputs" % (stored_path, i + 1), "\n  stored:   %r\n  executed: %r" % (x, y))
        images += sum(len(o[2]) for o in y if o[0] in ("execute_result", "display_data"))
    check(not any(o[0] == "error" for c in b for o in c), "%s runs without errors" % stored_path)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "session":
        session()
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    done()
