-- t7lapack.lua — Torch7's LAPACK names (torch.gesv, potrf, svd, ...) in Torch7
-- mode, over lutorch's linear algebra (torch.linalg and the old PyTorch names).
-- torch7.lua calls torch._t7_lapack_install during the mode's install; nothing
-- here runs in PyTorch mode.
--
-- What Torch7 did that these keep: the result-first forms ([resb, resa,] b, a),
-- character options ('U'/'L', 'N'/'T', 'N'/'V', 'S'/'A'), and the layout of the
-- matrices LAPACK wrote: Torch7 returned them column-major (strides 1, m: a
-- transposed view), and code and tests check :isContiguous() on them. A result
-- tensor that is already column-major and of the right size is written in
-- place; any other is pointed at a new column-major tensor (Torch7 resized it).
local torch = ...

function torch._t7_lapack_install(torch, M)
  local linalg = torch.linalg
  -- the PyTorch forms these names replace
  local svd0, geqrf0, ormqr0 = torch.svd, torch.geqrf, torch.ormqr

  local function column_major(v)
    if v:dim() < 2 then return v:contiguous() end
    return v:transpose(1, 2):contiguous():transpose(1, 2)
  end
  local function is_column_major(x)
    if x:dim() ~= 2 then return x:isContiguous() end
    local s = x:stride()
    return s[1] == 1 and (s[2] == x:size(1) or x:size(2) == 1)
  end
  -- put value into res as Torch7's LAPACK wrappers left it; res may be nil
  local function place(res, v)
    if res == nil then return column_major(v) end
    if M.isSameSizeAs(res, v) and is_column_major(res) then
      if not rawequal(res, v) then res:copy(v) end
      return res
    end
    M.set(res, column_major(v))
    return res
  end

  local function check_matrix(fname, arg, a, square)
    if not torch.isTensor(a) then error(("torch.%s: argument '%s' must be a tensor"):format(fname, arg), 3) end
    if a:dim() ~= 2 then
      error(("torch.%s: argument '%s' must be a 2-D tensor (got %d-D)"):format(fname, arg, a:dim()), 3)
    end
    if square and a:size(1) ~= a:size(2) then
      error(("torch.%s: argument '%s' must be a square matrix (got %dx%d)"):format(fname, arg, a:size(1), a:size(2)), 3)
    end
  end
  -- a 1-D right-hand side b is a column, as in Torch7
  local function as_matrix(b) return b:dim() == 1 and b:view(b:size(1), 1) or b end
  local function char_opt(fname, what, v, allowed, dflt)
    if v == nil then return dflt end
    for _, a in ipairs(allowed) do if v == a then return v end end
    error(("torch.%s: %s must be one of '%s' (got %s)"):format(fname, what, table.concat(allowed, "', '"),
      tostring(v)), 3)
  end
  -- the leading result tensors of a call: n of them when the first n+k
  -- arguments are tensors
  local function split(nres, nin, ...)
    local args = table.pack(...)
    local ntensor = 0
    while ntensor < args.n and torch.isTensor(args[ntensor + 1]) do ntensor = ntensor + 1 end
    local res = {}
    local first = 1
    if ntensor >= nres + nin then
      for i = 1, nres do res[i] = args[i] end
      first = nres + 1
    end
    return res, table.unpack(args, first, args.n)
  end

  local function def(name, f) torch[name] = f; M[name] = f end

  -- X, LU = torch.gesv([resb, resa,] B, A)
  def("gesv", function(...)
    local res, b, a = split(2, 2, ...)
    check_matrix("gesv", "A", a, true)
    if not torch.isTensor(b) then error("torch.gesv: argument 'B' must be a tensor", 2) end
    local LU, piv = linalg.lu_factor(a)
    local x = torch.lu_solve(as_matrix(b), LU, piv)
    return place(res[1], x), place(res[2], LU)
  end)

  -- X = torch.trtrs([resb, resa,] b, a [, uplo] [, trans] [, diag])
  def("trtrs", function(...)
    local res, b, a, uplo, trans, diag = split(2, 2, ...)
    check_matrix("trtrs", "A", a, true)
    uplo = char_opt("trtrs", "uplo", uplo, { "U", "L" }, "U")
    trans = char_opt("trtrs", "trans", trans, { "N", "T" }, "N")
    diag = char_opt("trtrs", "diag", diag, { "N", "U" }, "N")
    local upper = uplo == "U"
    local A = a
    if trans == "T" then A = a:t(); upper = not upper end
    local x = linalg.solve_triangular(A, as_matrix(b), { upper = upper, unitriangular = diag == "U" })
    local out = place(res[1], x)
    if res[2] then place(res[2], a) end
    return out, res[2] or column_major(a)
  end)

  -- torch.potrf([res,] A [, uplo]): the other triangle is zero
  def("potrf", function(...)
    local res, a, uplo = split(1, 1, ...)
    check_matrix("potrf", "A", a, true)
    uplo = char_opt("potrf", "uplo", uplo, { "U", "L" }, "U")
    return place(res[1], linalg.cholesky(a, { upper = uplo == "U" }))
  end)

  -- torch.potrs([res,] B, chol [, uplo])
  def("potrs", function(...)
    local res, b, chol, uplo = split(1, 2, ...)
    check_matrix("potrs", "chol", chol, true)
    uplo = char_opt("potrs", "uplo", uplo, { "U", "L" }, "U")
    return place(res[1], torch.cholesky_solve(as_matrix(b), chol, uplo == "U"))
  end)

  -- torch.potri([res,] chol [, uplo])
  def("potri", function(...)
    local res, chol, uplo = split(1, 1, ...)
    check_matrix("potri", "chol", chol, true)
    uplo = char_opt("potri", "uplo", uplo, { "U", "L" }, "U")
    return place(res[1], torch.cholesky_inverse(chol, uplo == "U"))
  end)

  -- torch.pstrf([res, piv,] A [, uplo]): complete pivoting, A semi-definite;
  -- piv (an IntTensor) is 1-based: P[piv[k], k] = 1
  def("pstrf", function(...)
    local res, a, uplo, tol = split(2, 1, ...)
    check_matrix("pstrf", "A", a, true)
    uplo = char_opt("pstrf", "uplo", uplo, { "U", "L" }, "U")
    local f, piv = torch._pstrf(a, uplo == "U", tol or -1)
    piv = piv:int()
    local p = res[2]
    if p then
      if not M.isSameSizeAs(p, piv) then M.resize(p, piv:size()) end
      p:copy(piv)
    end
    return place(res[1], f), p or piv
  end)

  -- X = torch.gels([resb, resa,] b, a): least squares (m >= n) or least norm
  -- (m < n) for a full-rank a, through LAPACK's gels; X is n x k
  def("gels", function(...)
    local res, b, a = split(2, 2, ...)
    check_matrix("gels", "A", a, false)
    local B = as_matrix(b)
    if B:size(1) ~= a:size(1) then
      error(("torch.gels: argument 'B' must have %d rows, as A has (got %d)"):format(a:size(1), B:size(1)), 2)
    end
    local x = linalg.lstsq(a, B, { driver = "gels" })
    local out = place(res[1], x)
    if res[2] then place(res[2], a) end
    return out, res[2] or column_major(a)
  end)

  -- e, V = torch.symeig([rese, resv,] a [, 'N'|'V'] [, 'U'|'L']): ascending
  def("symeig", function(...)
    local res, a, jobz, uplo = split(2, 1, ...)
    check_matrix("symeig", "A", a, true)
    jobz = char_opt("symeig", "jobz", jobz, { "N", "V" }, "N")
    uplo = char_opt("symeig", "uplo", uplo, { "U", "L" }, "U")
    if jobz == "N" then
      local e = linalg.eigvalsh(a, uplo)
      return place(res[1], e), res[2]
    end
    local e, v = linalg.eigh(a, uplo)
    return place(res[1], e), place(res[2], v)
  end)

  -- e, V = torch.eig([rese, resv,] a [, 'N'|'V']): e is m x 2 (real, imaginary)
  def("eig", function(...)
    local res, a, jobz = split(2, 1, ...)
    check_matrix("eig", "A", a, true)
    jobz = char_opt("eig", "jobz", jobz, { "N", "V" }, "N")
    local e, v = torch._eig_real(a, jobz == "V")
    local ee = place(res[1], e)
    if jobz == "N" then return ee, res[2] end
    return ee, place(res[2], v)
  end)

  -- U, S, V = torch.svd([resu, ress, resv,] a [, 'S'|'A'])
  def("svd", function(...)
    local res, a, some = split(3, 1, ...)
    check_matrix("svd", "A", a, false)
    some = char_opt("svd", "jobu", some, { "S", "A" }, "S")
    local U, S, V = svd0(a, some == "S")
    return place(res[1], U), place(res[2], S), place(res[3], V)
  end)

  -- torch.inverse([res,] x)
  def("inverse", function(...)
    local res, a = split(1, 1, ...)
    check_matrix("inverse", "x", a, true)
    return place(res[1], linalg.inv(a))
  end)

  -- q, r = torch.qr([q, r,] x): the thin factorisation
  def("qr", function(...)
    local res, a = split(2, 1, ...)
    check_matrix("qr", "x", a, false)
    local q, r = linalg.qr(a)
    return place(res[1], q), place(res[2], r)
  end)

  -- m, tau = torch.geqrf([m, tau,] a); q = torch.orgqr([q,] m, tau)
  def("geqrf", function(...)
    local res, a = split(2, 1, ...)
    check_matrix("geqrf", "a", a, false)
    local m, tau = geqrf0(a)
    return place(res[1], m), place(res[2], tau)
  end)
  def("orgqr", function(...)
    local res, m, tau = split(1, 2, ...)
    check_matrix("orgqr", "m", m, false)
    return place(res[1], linalg.householder_product(m, tau))
  end)

  -- torch.ormqr([res,] m, tau, mat [, 'L'|'R'] [, 'N'|'T'])
  def("ormqr", function(...)
    local res, m, tau, mat, side, trans = split(1, 3, ...)
    check_matrix("ormqr", "m", m, false)
    side = char_opt("ormqr", "side", side, { "L", "R" }, "L")
    trans = char_opt("ormqr", "trans", trans, { "N", "T" }, "N")
    return place(res[1], ormqr0(m, tau, mat, side == "L", trans == "T"))
  end)
end
