-- npref.lua — run a snippet of numpy (Debian's python3-numpy, /usr/bin/python3) on
-- a lutorch test's tensors and get its results back as tensors, through an .npz file
-- each way (exact float64 bytes, so any size travels).
--
--   local N = require "npref"
--   if not N.available() then T.skip("...", N.why()); T.done() end
--   local r = N.run({ x = x }, "y = np.fft.fft(x)", { "y" })
--   -- r[1]: float64 (or complex128) lutorch tensor of numpy's shape
--
-- Complex tensors travel as their real view (..., 2) and arrive as complex128 in the
-- snippet; complex results come back as complex128 tensors. Other dtypes travel as
-- float64. `np` is imported in the snippet.
local N = {}
N.PY = "/usr/bin/python3"

local have, why
function N.available()
  if have == nil then
    local p = io.popen(N.PY .. " -c 'import numpy' >/dev/null 2>&1; echo $?")
    local rc = p and p:read("a") or "1"
    if p then p:close() end
    have = rc:match("^0") ~= nil
    why = have and nil or (N.PY .. " cannot import numpy (apt-get install python3-numpy)")
  end
  return have
end
function N.why() N.available(); return why end

local SCRIPT = [==[
import sys, numpy as np
d = dict(np.load(sys.argv[1]))
env = {"np": np}
for k, v in d.items():
    if k.endswith("__c"):
        env[k[:-3]] = v[..., 0] + 1j * v[..., 1]
    else:
        env[k] = v
exec(open(sys.argv[2]).read(), env)
out = {}
for i, name in enumerate(sys.argv[4:]):
    v = np.asarray(env[name])
    if np.iscomplexobj(v):
        out["r%d__c" % i] = np.stack([v.real, v.imag], -1).astype(np.float64)
    else:
        out["r%d" % i] = v.astype(np.float64)
np.savez(sys.argv[3], **out)
]==]

local function is_complex(t) return t.dtype == torch.complex64 or t.dtype == torch.complex128 end

function N.run(inputs, code, outs)
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local arrays = {}
  for k, v in pairs(inputs) do
    if is_complex(v) then
      arrays[k .. "__c"] = torch.view_as_real(v:to(torch.complex128)):contiguous()
    else
      arrays[k] = v:to(torch.float64):contiguous()
    end
  end
  torch.save_npz(dir .. "/in.npz", arrays)
  local f = assert(io.open(dir .. "/s.py", "w")); f:write(SCRIPT); f:close()
  f = assert(io.open(dir .. "/c.py", "w")); f:write(code); f:close()
  local cmd = ("%s %s/s.py %s/in.npz %s/c.py %s/out.npz %s 2>&1"):format(
    N.PY, dir, dir, dir, dir, table.concat(outs, " "))
  local p = io.popen(cmd)
  local msg = p:read("a")
  local ok = p:close()
  if not ok then os.execute("rm -rf " .. dir); error("numpy failed: " .. msg) end
  local got = torch.load_npz(dir .. "/out.npz")
  os.execute("rm -rf " .. dir)
  local r = {}
  for i = 1, #outs do
    local c = got["r" .. (i - 1) .. "__c"]
    r[i] = c and torch.view_as_complex(c:contiguous()) or got["r" .. (i - 1)]
  end
  return r
end

return N
