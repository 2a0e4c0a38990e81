-- test_gemm_lib.lua — the library of float32 matrix products (torch.backends.cpu.gemm_library,
-- set_gemm_library; src/cpu/gemm_lib.c): oneDNN and OpenBLAS give the same products (to
-- float32 rounding) on every layout la_gemm.c passes, and the choice is checked.
local T = require("testing")
local cpu = torch.backends.cpu

local function with_lib(name, fn)
  local old = cpu.gemm_library()
  cpu.set_gemm_library(name)
  local ok, err = pcall(fn)
  cpu.set_gemm_library(old == "onednn" and "onednn" or "openblas")
  if not ok then error(err, 0) end
end

T.test("gemm_library names the library and says why not oneDNN", function()
  local name, why = cpu.gemm_library()
  T.ok(name == "onednn" or name == "openblas", name)
  if name == "openblas" then T.eq(type(why), "string") else T.eq(why, nil) end
  with_lib("openblas", function() T.eq(cpu.gemm_library(), "openblas") end)
end)

T.test("set_gemm_library: bad names are errors naming the argument", function()
  T.raises(function() cpu.set_gemm_library("mkl") end, "set_gemm_library", "'name'")
  T.raises(function() cpu.set_gemm_library("OneDNN") end, "set_gemm_library")
  T.raises(function() cpu.set_gemm_library() end, "set_gemm_library")
end)

local function gemm_library_under(env)
  local exe = arg and arg[-1] or "lutorch"
  local p = io.popen(("%s LUTORCH_GEMM=auto '%s' -e "):format(env, exe) ..
    [['local a = torch.randn(64, 784); local b = a:matmul(torch.randn(784, 512)); print(torch.backends.cpu.gemm_library())']]
    .. " 2>/dev/null")
  local out = p:read("a")
  p:close()
  return out
end

T.test("auto follows the kernels' level: LUTORCH_CPU_CAPABILITY=default keeps OpenBLAS", function()
  local out = gemm_library_under("LUTORCH_CPU_CAPABILITY=default")
  T.ok(out:match("^openblas\t"), out)
  T.ok(out:find("LUTORCH_CPU_CAPABILITY", 1, true) or out:find("AddressSanitizer", 1, true), out)
end)

T.test("auto with the AVX2 kernels: oneDNN where it loads (few-row products only)", function()
  local out = gemm_library_under("LUTORCH_CPU_CAPABILITY=avx2")
  if out:find("AddressSanitizer", 1, true) or out:find("could not be opened", 1, true) then
    T.ok(out:match("^openblas\t"), out)
  elseif not out:find("AVX2 kernels", 1, true) then   -- a CPU without AVX2 runs its default kernels
    T.ok(out:match("^onednn"), out)
  end
end)

cpu.set_gemm_library("auto")
local asan = tostring(select(2, cpu.gemm_library())):find("AddressSanitizer", 1, true)
local have_onednn = not asan and pcall(cpu.set_gemm_library, "onednn")
cpu.set_gemm_library("auto")
if asan then
  print("SKIP oneDNN against OpenBLAS: an AddressSanitizer build (oneDNN's JIT code is not instrumented and LeakSanitizer's exit scan faults among its threads)")
elseif not have_onednn then
  print("SKIP oneDNN against OpenBLAS: libdnnl.so.2 is not loadable here (" .. tostring(select(2, cpu.gemm_library())) .. ")")
else
  -- each product under both libraries, against float64
  local function both(fn)
    local r = {}
    for _, lib in ipairs({ "openblas", "onednn" }) do with_lib(lib, function() r[lib] = fn() end) end
    return r.openblas, r.onednn
  end
  local function rel(a, ref) return (a:double() - ref):abs():max():item() / (ref:abs():max():item() + 1e-30) end

  T.test("mm, every transpose, the MLP's and a classifier's shapes", function()
    torch.manual_seed(3)
    for _, s in ipairs({ { 64, 784, 512 }, { 64, 512, 784 }, { 512, 64, 784 }, { 64, 256, 10 }, { 8, 8, 8 },
                         { 33, 70, 17 }, { 128, 64, 128 } }) do
      local m, k, n = s[1], s[2], s[3]
      for _, ta in ipairs({ false, true }) do
        for _, tb in ipairs({ false, true }) do
          local A = ta and torch.randn(k, m):t() or torch.randn(m, k)
          local B = tb and torch.randn(n, k):t() or torch.randn(k, n)
          local ref = A:double():mm(B:double())
          local o, d = both(function() return A:mm(B) end)
          T.ok(rel(o, ref) < 1e-5, "openblas " .. table.concat(s, "x"))
          T.ok(rel(d, ref) < 1e-5, "onednn " .. table.concat(s, "x") .. (ta and " tA" or "") .. (tb and " tB" or ""))
        end
      end
    end
  end)

  T.test("addmm (beta), views with a leading dimension, bmm, linear and conv2d", function()
    torch.manual_seed(4)
    local C = torch.randn(64, 300)
    local A, B = torch.randn(64, 100), torch.randn(100, 300)
    local ref = C:double() * 0.5 + A:double():mm(B:double()) * 2
    local o, d = both(function() return torch.addmm(C, A, B, { beta = 0.5, alpha = 2 }) end)
    T.ok(rel(o, ref) < 1e-5 and rel(d, ref) < 1e-5, "addmm")
    local big = torch.randn(80, 200)
    local Av = big:narrow(2, 11, 100):narrow(1, 1, 64)      -- lda 200
    ref = Av:double():mm(B:double())
    o, d = both(function() return Av:mm(B) end)
    T.ok(rel(d, ref) < 1e-5, "strided A")
    local X, Y = torch.randn(4, 64, 48), torch.randn(4, 48, 96)
    ref = X:double():bmm(Y:double())
    o, d = both(function() return X:bmm(Y) end)
    T.ok(rel(d, ref) < 1e-5, "bmm")
    local x, w = torch.randn(8, 6, 20, 20), torch.randn(16, 6, 5, 5)
    ref = torch.nn.functional.conv2d(x:double(), w:double())
    o, d = both(function() return torch.nn.functional.conv2d(x, w) end)
    T.ok(rel(d, ref) < 1e-5, "conv2d")
  end)

  T.test("two threads: products split over the pool agree", function()
    local old = torch.get_num_threads()
    torch.set_num_threads(2)
    local A, B = torch.randn(256, 512), torch.randn(512, 1024)
    local ref = A:double():mm(B:double())
    local _, d = both(function() return A:mm(B) end)
    torch.set_num_threads(old)
    T.ok(rel(d, ref) < 1e-5)
  end)
end

T.done()
