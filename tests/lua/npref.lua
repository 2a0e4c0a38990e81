-- npref.lua — run a snippet of numpy (Debian's python3-numpy, /usr/bin/python3) on
-- a lutorch test's tensors and get its results back as tensors, through an .npz file
-- each way (exact float64 bytes, so any size travels).
--
--   local N = require "npref"
--   if not N.available() then T.skip("...", N.why()); T.done() end
--   local r = N.run({ x = x }, "y = np.fft.fft(x)", { "y" })
--   -- r[1]: a float64 lutorch tensor of numpy's shape, or for a complex result a
--   -- table { re = ..., im = ... } of two
--   local err = N.relerr(z, r[1])   -- max |z - ref| / max |ref|, z real or complex
--
-- Complex tensors travel as their real and imaginary parts and arrive as complex128
-- in the snippet. Other dtypes travel as float64. `np` is imported in the snippet.
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
    if k.endswith("__re"):
        env[k[:-4]] = v + 1j * d[k[:-4] + "__im"]
    elif not k.endswith("__im"):
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

-- a complex tensor's real and imaginary parts, as float64 tensors of its shape
function N.parts(z)
  local flat = z:contiguous():view(-1):totable()
  local re, im = {}, {}
  for i, v in ipairs(flat) do re[i] = v.real; im[i] = v.imag end
  local shape = z:size()
  local function mk(t)
    local r = torch.tensor(#t > 0 and t or { 0 }, { dtype = torch.float64 })
    if #t == 0 then r = r:narrow(1, 1, 0) end
    return r:view(shape)
  end
  return mk(re), mk(im)
end

-- max |a - ref| over max |ref| (at least tiny): a real tensor against a real reference,
-- or a complex one against { re, im }
function N.relerr(a, ref)
  local ar, ai, rr, ri
  if is_complex(a) then ar, ai = N.parts(a) else ar = a:to(torch.float64) end
  if type(ref) == "table" then rr, ri = ref.re, ref.im else rr = ref end
  if ar:numel() ~= rr:numel() then error(("shapes differ: %d vs %d values"):format(ar:numel(), rr:numel())) end
  local e = (ar - rr):abs():max():item()
  local m = rr:abs():max():item()
  if ai or ri then
    e = math.max(e, ((ai or ar * 0) - (ri or rr * 0)):abs():max():item())
    m = math.max(m, (ri or rr * 0):abs():max():item())
  end
  return e / math.max(m, 1e-300)
end

function N.run(inputs, code, outs)
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local arrays = {}
  for k, v in pairs(inputs) do
    if is_complex(v) then
      arrays[k .. "__re"], arrays[k .. "__im"] = N.parts(v)
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
    if c then
      r[i] = { re = c:select(c:dim(), 1):contiguous(), im = c:select(c:dim(), 2):contiguous() }
    else
      r[i] = got["r" .. (i - 1)]
    end
  end
  return r
end

return N
