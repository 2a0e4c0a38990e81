-- LBFGS (PyTorch's torch.optim.LBFGS: the two-loop recursion over a history
-- of flat steps, a first step scaled by the gradient, an optional strong-Wolfe
-- line search with cubic interpolation). One parameter group; the closure is
-- required and returns the loss.
local torch = require "torch"

return function(optim)
  local Optimizer = optim.Optimizer
  local LBFGS = Optimizer:extend("LBFGS")
  optim.LBFGS = LBFGS

  local function num(x)
    if type(x) == "number" then return x end
    if torch.is_tensor(x) then return x:item() end
    error("LBFGS: the closure must return the loss (a number or a 1-element tensor), got " .. type(x), 0)
  end

  -- LBFGS(params, lr=1, max_iter=20, max_eval=max_iter * 5 // 4, tolerance_grad=1e-7,
  -- tolerance_change=1e-9, history_size=100, line_search_fn=nil); false stands for nil in the
  -- defaults table
  local LBFGS_ARGS = optim._constructor("LBFGS", "lr=1, max_iter=20, max_eval=nil, tolerance_grad=1e-7, " ..
    "tolerance_change=1e-9, history_size=100, line_search_fn=nil", { lr = 1, max_iter = 20, max_eval = false,
    tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100, line_search_fn = false })
  function LBFGS:__init(...)
    local params, d = LBFGS_ARGS(...)
    if d.max_eval == false then d.max_eval = d.max_iter * 5 // 4 end
    Optimizer.__init(self, params, d)
    if #self.param_groups ~= 1 then error("LBFGS: doesn't support per-parameter options (parameter groups)", 0) end
    self._params = self.param_groups[1].params
  end
  function LBFGS:add_param_group(g)
    if self.param_groups and #self.param_groups >= 1 then error("LBFGS: doesn't support per-parameter options (parameter groups)", 0) end
    Optimizer.add_param_group(self, g)
  end
  function LBFGS:_check(g)
    if type(g.lr) ~= "number" or g.lr < 0 then error("LBFGS: invalid learning rate (option 'lr'): " .. tostring(g.lr), 0) end
    if math.type(g.max_iter) ~= "integer" or g.max_iter < 1 then
      error("LBFGS: option 'max_iter' must be a positive integer, got " .. tostring(g.max_iter), 0) end
    if math.type(g.history_size) ~= "integer" or g.history_size < 1 then
      error("LBFGS: option 'history_size' must be a positive integer, got " .. tostring(g.history_size), 0) end
    if g.line_search_fn ~= false and g.line_search_fn ~= nil and g.line_search_fn ~= "strong_wolfe" then
      error("LBFGS: option 'line_search_fn' must be \"strong_wolfe\" or nil, got " .. tostring(g.line_search_fn), 0)
    end
  end

  function LBFGS:_numel()
    local n = 0
    for _, p in ipairs(self._params) do n = n + p:numel() end
    return n
  end
  function LBFGS:_flat_grad()
    local parts = {}
    for i, p in ipairs(self._params) do
      local g = p.grad
      parts[i] = g == nil and torch.zeros(p:numel(), { dtype = p.dtype }) or g:reshape(-1)
    end
    return torch.cat(parts, 1)
  end
  -- p += t * d (d flat), one fused call
  function LBFGS:_add_grad(t, d)
    local views, off = {}, 0
    for i, p in ipairs(self._params) do
      local n = p:numel()
      views[i] = d:narrow(1, off + 1, n):view(p.shape)
      off = off + n
    end
    torch._foreach_add_(self._params, views, { alpha = t })
  end
  function LBFGS:_clone_params()
    local c = {}
    for i, p in ipairs(self._params) do c[i] = p:clone() end
    return c
  end
  function LBFGS:_set_params(x)
    for i, p in ipairs(self._params) do p:copy_(x[i]) end
  end
  function LBFGS:_directional_evaluate(closure, x, t, d)
    self:_add_grad(t, d)
    local loss = num(torch.enable_grad(closure))
    local g = self:_flat_grad()
    self:_set_params(x)
    return loss, g
  end

  -- the minimiser of the cubic through (x1, f1, g1), (x2, f2, g2), clamped
  local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
    if lo == nil then
      if x1 <= x2 then lo, hi = x1, x2 else lo, hi = x2, x1 end
    end
    local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    local d2sq = d1 * d1 - g1 * g2
    if d2sq >= 0 then
      local d2 = math.sqrt(d2sq)
      local m
      if x1 <= x2 then m = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
      else m = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2)) end
      return math.min(math.max(m, lo), hi)
    end
    return (lo + hi) / 2
  end
  optim._cubic_interpolate = cubic_interpolate

  local function dot(a, b) return a:dot(b):item() end

  -- strong-Wolfe line search along d from x (f, g, gtd at t = 0); returns
  -- f, g at the accepted t, t, and the evaluations spent
  local function strong_wolfe(obj, x, t, d, f, g, gtd, c1, c2, tol_change, max_ls)
    c1, c2, tol_change, max_ls = c1 or 1e-4, c2 or 0.9, tol_change or 1e-9, max_ls or 25
    local d_norm = d:abs():max():item()
    g = g:clone()
    local f_new, g_new = obj(x, t, d)
    local evals = 1
    local gtd_new = dot(g_new, d)
    local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    local done, ls_iter = false, 0
    local br, br_f, br_g, br_gtd
    while ls_iter < max_ls do
      if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev) then
        br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
        break
      end
      if math.abs(gtd_new) <= -c2 * gtd then
        br, br_f, br_g = { t }, { f_new }, { g_new }
        done = true
        break
      end
      if gtd_new >= 0 then
        br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
        break
      end
      -- extrapolate
      local min_step, max_step = t + 0.01 * (t - t_prev), t * 10
      local tmp = t
      t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
      t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
      f_new, g_new = obj(x, t, d)
      evals = evals + 1
      gtd_new = dot(g_new, d)
      ls_iter = ls_iter + 1
    end
    if ls_iter == max_ls then
      br, br_f, br_g = { 0, t }, { f, f_new }, { g, g_new }
    end
    -- zoom into the bracket
    local insuf = false
    local low, high = 1, 2
    if not (br_f[1] <= br_f[#br_f]) then low, high = 2, 1 end
    while not done and ls_iter < max_ls do
      if math.abs(br[2] - br[1]) * d_norm < tol_change then break end
      t = cubic_interpolate(br[1], br_f[1], br_gtd[1], br[2], br_f[2], br_gtd[2])
      local bmax, bmin = math.max(br[1], br[2]), math.min(br[1], br[2])
      local eps = 0.1 * (bmax - bmin)
      if math.min(bmax - t, t - bmin) < eps then
        if insuf or t >= bmax or t <= bmin then
          if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - eps else t = bmin + eps end
          insuf = false
        else
          insuf = true
        end
      else
        insuf = false
      end
      f_new, g_new = obj(x, t, d)
      evals = evals + 1
      gtd_new = dot(g_new, d)
      ls_iter = ls_iter + 1
      if f_new > f + c1 * t * gtd or f_new >= br_f[low] then
        br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new:clone(), gtd_new
        if br_f[1] <= br_f[2] then low, high = 1, 2 else low, high = 2, 1 end
      else
        if math.abs(gtd_new) <= -c2 * gtd then
          done = true
        elseif gtd_new * (br[high] - br[low]) >= 0 then
          br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
        end
        br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new:clone(), gtd_new
      end
    end
    return br_f[low], br_g[low], br[low], evals
  end
  optim._strong_wolfe = strong_wolfe

  function LBFGS:step(closure)
    if type(closure) ~= "function" then error("LBFGS: step requires a closure that re-evaluates the model and returns the loss", 0) end
    local g = self.param_groups[1]
    local lr, max_iter, max_eval = g.lr, g.max_iter, g.max_eval
    local tol_grad, tol_change, hist = g.tolerance_grad, g.tolerance_change, g.history_size
    local st = self.state[self._params[1]]
    if st == nil then st = { func_evals = 0, n_iter = 0 }; self.state[self._params[1]] = st end

    local orig_loss = torch.enable_grad(closure)
    local loss = num(orig_loss)
    local evals = 1
    st.func_evals = st.func_evals + 1
    return torch.no_grad(function()
      local flat_grad = self:_flat_grad()
      if flat_grad:abs():max():item() <= tol_grad then return orig_loss end
      local d, t = st.d, st.t
      local old_dirs, old_stps, ro, H_diag = st.old_dirs, st.old_stps, st.ro, st.H_diag
      local prev_flat_grad, prev_loss = st.prev_flat_grad, st.prev_loss
      local n_iter = 0
      while n_iter < max_iter do
        n_iter = n_iter + 1
        st.n_iter = st.n_iter + 1
        if st.n_iter == 1 then
          d = -flat_grad
          old_dirs, old_stps, ro, H_diag = {}, {}, {}, 1
        else
          local y = flat_grad - prev_flat_grad
          local s = d * t
          local ys = dot(y, s)
          if ys > 1e-10 then
            if #old_dirs == hist then
              table.remove(old_dirs, 1); table.remove(old_stps, 1); table.remove(ro, 1)
            end
            old_dirs[#old_dirs + 1], old_stps[#old_stps + 1], ro[#ro + 1] = y, s, 1 / ys
            H_diag = ys / dot(y, y)
          end
          -- two-loop recursion
          local n_old = #old_dirs
          local al = {}
          local q = -flat_grad
          for i = n_old, 1, -1 do
            al[i] = dot(old_stps[i], q) * ro[i]
            q:add_(old_dirs[i], { alpha = -al[i] })
          end
          d = q * H_diag
          for i = 1, n_old do
            local be = dot(old_dirs[i], d) * ro[i]
            d:add_(old_stps[i], { alpha = al[i] - be })
          end
        end
        if prev_flat_grad == nil then prev_flat_grad = flat_grad:clone() else prev_flat_grad:copy_(flat_grad) end
        prev_loss = loss
        if st.n_iter == 1 then t = math.min(1, 1 / flat_grad:abs():sum():item()) * lr else t = lr end
        local gtd = dot(flat_grad, d)
        if gtd > -tol_change then break end
        local ls_evals = 0
        if g.line_search_fn == "strong_wolfe" then
          local x_init = self:_clone_params()
          local function obj(x, tt, dd) return self:_directional_evaluate(closure, x, tt, dd) end
          loss, flat_grad, t, ls_evals = strong_wolfe(obj, x_init, t, d, loss, flat_grad, gtd)
          self:_add_grad(t, d)
        else
          self:_add_grad(t, d)
          if n_iter ~= max_iter then
            loss = num(torch.enable_grad(closure))
            flat_grad = self:_flat_grad()
            ls_evals = 1
          end
        end
        local opt_cond = flat_grad:abs():max():item() <= tol_grad
        evals = evals + ls_evals
        st.func_evals = st.func_evals + ls_evals
        if n_iter == max_iter or evals >= max_eval or opt_cond then break end
        if (d * t):abs():max():item() <= tol_change then break end
        if math.abs(loss - prev_loss) < tol_change then break end
      end
      st.d, st.t, st.old_dirs, st.old_stps, st.ro, st.H_diag = d, t, old_dirs, old_stps, ro, H_diag
      st.prev_flat_grad, st.prev_loss = prev_flat_grad, prev_loss
      return orig_loss
    end)
  end
end
