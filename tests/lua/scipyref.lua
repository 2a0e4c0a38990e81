-- scipyref.lua — reference values of special functions from scipy.special
-- (Debian's python3-scipy, 1.10) and mpmath (python3-mpmath, which scipy's
-- package brings), computed at test time by /usr/bin/python3.
--
--   local S = require "scipyref"
--   if not S.available() then T.skip("...", S.why()); T.done() end
--   local r = S.run({ erfcx = { "s.erfcx(x)", xs }, zeta = { "s.zeta(x, y)", xs, ys } })
--   -- r.erfcx[i]: the value at xs[i] (Lua numbers; NaN and infinities kept)
--
-- In an expression `s` is scipy.special, `np` numpy, `mp` mpmath (at 60
-- digits: use it where scipy's own error is larger than lutorch's, and say so
-- in the test); x (and y) is one element, a Python float; the result is
-- converted with float(). One Python run answers every case of a table.
local P = require "pyref"
local S = {}
S.PY = P.PY

function S.available() return (P.can_import("scipy.special, mpmath")) end
function S.why()
  local _, why = P.can_import("scipy.special, mpmath")
  return why and why .. " (apt-get install python3-scipy python3-mpmath)"
end
local pylist = P.pylist

local PRELUDE = [[
import math, warnings
import numpy as np
import scipy.special as s
import mpmath as mp
mp.mp.dps = 60
warnings.simplefilter('ignore')
np.seterr(all='ignore')
def _lua(v):
    v = float(v)
    if v != v: return '(0/0)'
    if v == math.inf: return 'math.huge'
    if v == -math.inf: return '(-math.huge)'
    return repr(v)
_out = []
]]

-- cases: name -> { expr, xs[, ys] }; returns name -> list of numbers
function S.run(cases)
  local src = { PRELUDE }
  local names = {}
  for k in pairs(cases) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local c = cases[k]
    local ys = c[3] or c[2]
    src[#src + 1] = ("_out.append('%s={' + ','.join(_lua(%s) for x, y in zip(%s, %s)) + '}')"):format(
      k, c[1], pylist(c[2]), pylist(ys))
  end
  src[#src + 1] = "print('return {' + ','.join(_out) + '}')"
  return P.python(src, "scipyref")
end

return S
