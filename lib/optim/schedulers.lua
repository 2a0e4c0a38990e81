-- Learning-rate schedulers (torch.optim.lr_scheduler) with PyTorch's step
-- semantics: construction performs step 0; step() advances last_epoch and
-- sets each group's lr from the scheduler's (chainable) rule; step(epoch)
-- uses the closed form where PyTorch has one. get_last_lr() is the list of
-- lrs set by the last step.
local class = require "torch_class"

return function(optim)
  local S = {}

  -- the classes are optim.lr_scheduler.<Name> (torch_class.lua); a new scheduler is
  -- LRScheduler:extend("Name") with __init(optimizer, ...) calling self:_base_init and get_lr()

  -- a scheduler's signature (PyTorch's parameters and order): optim.lr_scheduler.StepLR(opt, 10,
  -- {gamma = 0.5}) is PyTorch's StepLR(opt, 10, gamma=0.5), and StepLR(opt, 10, 0.5) the same
  local function sig(name, spec) return class.signature("optim.lr_scheduler." .. name, spec) end

  local function check_optimizer(name, opt)
    if type(opt) ~= "table" or type(opt.param_groups) ~= "table" then
      error(name .. ": argument 'optimizer' must be an optimizer", 0)
    end
  end

  local function per_group(name, opt, v, what)
    if type(v) == "table" then
      if #v ~= #opt.param_groups then
        error(("%s: expected %d values for '%s', got %d"):format(name, #opt.param_groups, what, #v), 0)
      end
      return v
    end
    local r = {}
    for i = 1, #opt.param_groups do r[i] = v end
    return r
  end

  ------------------------------------------------------------ LRScheduler
  local LRScheduler = class("optim.lr_scheduler.LRScheduler")
  S.LRScheduler = LRScheduler
  S._LRScheduler = LRScheduler
  -- lr_scheduler.class(name, parent), the old way to make one, kept for scripts that use it
  function S.class(name, parent)
    if parent then return parent:extend(name) end
    return class("optim.lr_scheduler." .. name)
  end

  function LRScheduler:_base_init(optimizer, last_epoch)
    check_optimizer(self.__name, optimizer)
    self.optimizer = optimizer
    last_epoch = last_epoch or -1
    if last_epoch == -1 then
      for _, g in ipairs(optimizer.param_groups) do
        if g.initial_lr == nil then g.initial_lr = g.lr end
      end
    else
      for i, g in ipairs(optimizer.param_groups) do
        if g.initial_lr == nil then
          error(("%s: param 'initial_lr' is not specified in param_groups[%d] when resuming an optimizer"):format(self.__name, i), 0)
        end
      end
    end
    self.base_lrs = {}
    for i, g in ipairs(optimizer.param_groups) do self.base_lrs[i] = g.initial_lr end
    self.last_epoch = last_epoch
    self:_initial_step()
  end

  function LRScheduler:_initial_step()
    self._step_count = 0
    self:step()
  end

  function LRScheduler:get_last_lr()
    local r = {}
    for i, v in ipairs(self._last_lr) do r[i] = v end
    return r
  end

  function LRScheduler:step(epoch)
    self._step_count = self._step_count + 1
    local values
    if epoch == nil then
      self.last_epoch = self.last_epoch + 1
      values = self:get_lr()
    else
      self.last_epoch = epoch
      values = self._closed_form and self:_closed_form() or self:get_lr()
    end
    self._last_lr = {}
    for i, g in ipairs(self.optimizer.param_groups) do
      g.lr = values[i]
      self._last_lr[i] = values[i]
    end
  end

  local function lrs(self) local r = {} for i, g in ipairs(self.optimizer.param_groups) do r[i] = g.lr end return r end

  function LRScheduler:state_dict()
    local sd = {}
    for k, v in pairs(self) do
      if k ~= "optimizer" and type(v) ~= "function" then
        if type(v) == "table" and k ~= "lr_lambdas" and k ~= "_schedulers" then
          local c = {}
          for a, b in pairs(v) do c[a] = b end
          v = c
        end
        if k ~= "lr_lambdas" and k ~= "_schedulers" then sd[k] = v end
      end
    end
    if self._schedulers then
      sd._schedulers = {}
      for i, s in ipairs(self._schedulers) do sd._schedulers[i] = s:state_dict() end
    end
    return sd
  end
  function LRScheduler:load_state_dict(sd)
    for k, v in pairs(sd) do
      if k == "_schedulers" then
        for i, s in ipairs(v) do self._schedulers[i]:load_state_dict(s) end
      else
        if type(v) == "table" then local c = {} for a, b in pairs(v) do c[a] = b end v = c end
        self[k] = v
      end
    end
  end

  ------------------------------------------------------------ LambdaLR
  local LambdaLR = LRScheduler:extend("LambdaLR")
  S.LambdaLR = LambdaLR
  local LAMBDALR = sig("LambdaLR", "optimizer, lr_lambda, last_epoch=-1")
  function LambdaLR:__init(...)
    local opts = LAMBDALR(...)
    local optimizer, lr_lambda = opts.optimizer, opts.lr_lambda
    check_optimizer("LambdaLR", optimizer)
    if type(lr_lambda) ~= "function" and type(lr_lambda) ~= "table" then
      error("LambdaLR: argument 'lr_lambda' must be a function or a list of functions", 0)
    end
    self.lr_lambdas = per_group("LambdaLR", optimizer, lr_lambda, "lr_lambda")
    self:_base_init(optimizer, opts.last_epoch)
  end
  function LambdaLR:get_lr()
    local r = {}
    for i, base in ipairs(self.base_lrs) do r[i] = base * self.lr_lambdas[i](self.last_epoch) end
    return r
  end

  ------------------------------------------------------------ StepLR
  local StepLR = LRScheduler:extend("StepLR")
  S.StepLR = StepLR
  local STEPLR = sig("StepLR", "optimizer, step_size, gamma=0.1, last_epoch=-1")
  function StepLR:__init(...)
    local opts = STEPLR(...)
    local optimizer, step_size = opts.optimizer, opts.step_size
    if math.type(step_size) ~= "integer" or step_size < 1 then
      error("StepLR: argument 'step_size' must be a positive integer, got " .. tostring(step_size), 0)
    end
    self.step_size, self.gamma = step_size, opts.gamma
    self:_base_init(optimizer, opts.last_epoch)
  end
  function StepLR:get_lr()
    local r = lrs(self)
    if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return r end
    for i, v in ipairs(r) do r[i] = v * self.gamma end
    return r
  end
  function StepLR:_closed_form()
    local r = {}
    for i, b in ipairs(self.base_lrs) do r[i] = b * self.gamma ^ (self.last_epoch // self.step_size) end
    return r
  end

  ------------------------------------------------------------ MultiStepLR
  local MultiStepLR = LRScheduler:extend("MultiStepLR")
  S.MultiStepLR = MultiStepLR
  local MULTISTEPLR = sig("MultiStepLR", "optimizer, milestones, gamma=0.1, last_epoch=-1")
  function MultiStepLR:__init(...)
    local opts = MULTISTEPLR(...)
    local optimizer, milestones = opts.optimizer, opts.milestones
    if type(milestones) ~= "table" then error("MultiStepLR: argument 'milestones' must be a list of integers", 0) end
    self.milestones = {}
    for i, m in ipairs(milestones) do self.milestones[i] = m end
    table.sort(self.milestones)
    self.gamma = opts.gamma
    self:_base_init(optimizer, opts.last_epoch)
  end
  function MultiStepLR:get_lr()
    local r = lrs(self)
    local count = 0
    for _, m in ipairs(self.milestones) do if m == self.last_epoch then count = count + 1 end end
    if count == 0 then return r end
    for i, v in ipairs(r) do r[i] = v * self.gamma ^ count end
    return r
  end
  local function bisect_right(list, x)
    local n = 0
    for _, m in ipairs(list) do if m <= x then n = n + 1 end end
    return n
  end
  function MultiStepLR:_closed_form()
    local r = {}
    for i, b in ipairs(self.base_lrs) do r[i] = b * self.gamma ^ bisect_right(self.milestones, self.last_epoch) end
    return r
  end

  ------------------------------------------------------------ ConstantLR
  local ConstantLR = LRScheduler:extend("ConstantLR")
  S.ConstantLR = ConstantLR
  local CONSTANTLR = sig("ConstantLR", "optimizer, factor=1/3, total_iters=5, last_epoch=-1")
  function ConstantLR:__init(...)
    local opts = CONSTANTLR(...)
    local optimizer = opts.optimizer
    check_optimizer("ConstantLR", optimizer)
    self.factor, self.total_iters = opts.factor or 1 / 3, opts.total_iters
    if type(self.factor) ~= "number" then error("ConstantLR: option 'factor' must be a number", 0) end
    if self.factor > 1 or self.factor < 0 then error("ConstantLR: option 'factor' must be between 0 and 1", 0) end
    self:_base_init(optimizer, opts.last_epoch)
  end
  function ConstantLR:get_lr()
    local r = lrs(self)
    local f = 1
    if self.last_epoch == 0 then f = self.factor
    elseif self.last_epoch == self.total_iters then f = 1 / self.factor end
    for i, v in ipairs(r) do r[i] = v * f end
    return r
  end
  function ConstantLR:_closed_form()
    local r = {}
    for i, b in ipairs(self.base_lrs) do
      r[i] = b * (self.factor + (self.last_epoch >= self.total_iters and 1 - self.factor or 0))
    end
    return r
  end

  ------------------------------------------------------------ LinearLR
  local LinearLR = LRScheduler:extend("LinearLR")
  S.LinearLR = LinearLR
  local LINEARLR = sig("LinearLR", "optimizer, start_factor=1/3, end_factor=1.0, total_iters=5, last_epoch=-1")
  function LinearLR:__init(...)
    local opts = LINEARLR(...)
    local optimizer = opts.optimizer
    check_optimizer("LinearLR", optimizer)
    self.start_factor = opts.start_factor or 1 / 3
    self.end_factor = opts.end_factor
    self.total_iters = opts.total_iters
    if type(self.start_factor) ~= "number" or type(self.end_factor) ~= "number" then
      error("LinearLR: options 'start_factor' and 'end_factor' must be numbers", 0)
    end
    if self.start_factor > 1 or self.start_factor <= 0 then
      error("LinearLR: option 'start_factor' must be greater than 0 and at most 1", 0)
    end
    if self.end_factor > 1 or self.end_factor < 0 then error("LinearLR: option 'end_factor' must be between 0 and 1", 0) end
    self:_base_init(optimizer, opts.last_epoch)
  end
  function LinearLR:get_lr()
    local r = lrs(self)
    local e, s, n = self.end_factor, self.start_factor, self.total_iters
    if self.last_epoch == 0 then
      for i, v in ipairs(r) do r[i] = v * s end
    elseif self.last_epoch <= n then
      local f = 1 + (e - s) / (n * s + (self.last_epoch - 1) * (e - s))
      for i, v in ipairs(r) do r[i] = v * f end
    end
    return r
  end
  function LinearLR:_closed_form()
    local r = {}
    local e, s, n = self.end_factor, self.start_factor, self.total_iters
    for i, b in ipairs(self.base_lrs) do r[i] = b * (s + (e - s) * math.min(n, self.last_epoch) / n) end
    return r
  end

  ------------------------------------------------------------ ExponentialLR
  local ExponentialLR = LRScheduler:extend("ExponentialLR")
  S.ExponentialLR = ExponentialLR
  local EXPONENTIALLR = sig("ExponentialLR", "optimizer, gamma, last_epoch=-1")
  function ExponentialLR:__init(...)
    local opts = EXPONENTIALLR(...)
    local optimizer, gamma = opts.optimizer, opts.gamma
    if type(gamma) ~= "number" then error("ExponentialLR: argument 'gamma' must be a number", 0) end
    self.gamma = gamma
    self:_base_init(optimizer, opts.last_epoch)
  end
  function ExponentialLR:get_lr()
    local r = lrs(self)
    if self.last_epoch == 0 then return r end
    for i, v in ipairs(r) do r[i] = v * self.gamma end
    return r
  end
  function ExponentialLR:_closed_form()
    local r = {}
    for i, b in ipairs(self.base_lrs) do r[i] = b * self.gamma ^ self.last_epoch end
    return r
  end

  ------------------------------------------------------------ CosineAnnealingLR
  local CosineAnnealingLR = LRScheduler:extend("CosineAnnealingLR")
  S.CosineAnnealingLR = CosineAnnealingLR
  local COSINEANNEALINGLR = sig("CosineAnnealingLR", "optimizer, T_max, eta_min=0, last_epoch=-1")
  function CosineAnnealingLR:__init(...)
    local opts = COSINEANNEALINGLR(...)
    local optimizer, T_max = opts.optimizer, opts.T_max
    if type(T_max) ~= "number" or T_max <= 0 then error("CosineAnnealingLR: argument 'T_max' must be a positive number", 0) end
    self.T_max, self.eta_min = T_max, opts.eta_min
    self:_base_init(optimizer, opts.last_epoch)
  end
  function CosineAnnealingLR:get_lr()
    local r = lrs(self)
    local e, T, m = self.last_epoch, self.T_max, self.eta_min
    if e == 0 then return r end
    if self._step_count == 1 and e > 0 then
      for i, b in ipairs(self.base_lrs) do r[i] = m + (b - m) * (1 + math.cos(e * math.pi / T)) / 2 end
    elseif (e - 1 - T) % (2 * T) == 0 then
      for i, b in ipairs(self.base_lrs) do r[i] = r[i] + (b - m) * (1 - math.cos(math.pi / T)) / 2 end
    else
      for i, v in ipairs(r) do
        r[i] = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (v - m) + m
      end
    end
    return r
  end
  function CosineAnnealingLR:_closed_form()
    local r = {}
    for i, b in ipairs(self.base_lrs) do
      r[i] = self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
    end
    return r
  end

  ------------------------------------------------------------ CosineAnnealingWarmRestarts
  local CAWR = LRScheduler:extend("CosineAnnealingWarmRestarts")
  S.CosineAnnealingWarmRestarts = CAWR
  local CAWR_SIG = sig("CosineAnnealingWarmRestarts", "optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1")
  function CAWR:__init(...)
    local opts = CAWR_SIG(...)
    local optimizer, T_0 = opts.optimizer, opts.T_0
    if math.type(T_0) ~= "integer" or T_0 <= 0 then
      error("CosineAnnealingWarmRestarts: argument 'T_0' must be a positive integer, got " .. tostring(T_0), 0)
    end
    local T_mult = opts.T_mult or 1
    if math.type(T_mult) ~= "integer" or T_mult < 1 then
      error("CosineAnnealingWarmRestarts: option 'T_mult' must be an integer >= 1, got " .. tostring(T_mult), 0)
    end
    self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, opts.eta_min
    self.T_cur = opts.last_epoch
    self:_base_init(optimizer, opts.last_epoch)
  end
  function CAWR:get_lr()
    local r = {}
    for i, b in ipairs(self.base_lrs) do
      r[i] = self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
    end
    return r
  end
  function CAWR:step(epoch)
    if epoch == nil and self.last_epoch < 0 then epoch = 0 end
    if epoch == nil then
      epoch = self.last_epoch + 1
      self.T_cur = self.T_cur + 1
      if self.T_cur >= self.T_i then
        self.T_cur = self.T_cur - self.T_i
        self.T_i = self.T_i * self.T_mult
      end
    else
      if epoch < 0 then error("CosineAnnealingWarmRestarts: expected a non-negative epoch, got " .. tostring(epoch), 0) end
      if epoch >= self.T_0 then
        if self.T_mult == 1 then
          self.T_cur = epoch % self.T_0
        else
          local n = math.floor(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
          self.T_cur = epoch - self.T_0 * (self.T_mult ^ n - 1) / (self.T_mult - 1)
          self.T_i = self.T_0 * self.T_mult ^ n
        end
      else
        self.T_i = self.T_0
        self.T_cur = epoch
      end
    end
    self.last_epoch = math.floor(epoch)
    self._step_count = (self._step_count or 0) + 1
    local values = self:get_lr()
    self._last_lr = {}
    for i, g in ipairs(self.optimizer.param_groups) do g.lr = values[i]; self._last_lr[i] = values[i] end
  end

  ------------------------------------------------------------ OneCycleLR
  local OneCycleLR = LRScheduler:extend("OneCycleLR")
  S.OneCycleLR = OneCycleLR
  local ONECYCLELR = sig("OneCycleLR", "optimizer, max_lr, total_steps=nil, epochs=nil, steps_per_epoch=nil, " ..
    "pct_start=0.3, anneal_strategy='cos', cycle_momentum=true, base_momentum=0.85, max_momentum=0.95, " ..
    "div_factor=25.0, final_div_factor=1e4, three_phase=false, last_epoch=-1")
  function OneCycleLR:__init(...)
    local opts = ONECYCLELR(...)
    local optimizer, max_lr = opts.optimizer, opts.max_lr
    local name = "OneCycleLR"
    check_optimizer(name, optimizer)
    local total = opts.total_steps
    if total == nil then
      if opts.epochs == nil or opts.steps_per_epoch == nil then
        error("OneCycleLR: you must define either 'total_steps' or ('epochs' and 'steps_per_epoch')", 0)
      end
      total = opts.epochs * opts.steps_per_epoch
    end
    if math.type(total) ~= "integer" or total <= 0 then
      error("OneCycleLR: expected a positive integer 'total_steps', got " .. tostring(total), 0)
    end
    self.total_steps = total
    local pct = opts.pct_start or 0.3
    if type(pct) ~= "number" or pct < 0 or pct > 1 then error("OneCycleLR: option 'pct_start' must be in [0, 1], got " .. tostring(pct), 0) end
    local strat = opts.anneal_strategy or "cos"
    if strat ~= "cos" and strat ~= "linear" then
      error("OneCycleLR: option 'anneal_strategy' must be \"cos\" or \"linear\", got " .. tostring(strat), 0)
    end
    self.anneal_strategy = strat
    local div, fdiv = opts.div_factor or 25, opts.final_div_factor or 1e4
    if opts.three_phase then
      self._phases = {
        { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr", start_m = "max_momentum", end_m = "base_momentum" },
        { end_step = 2 * pct * total - 2, start_lr = "max_lr", end_lr = "initial_lr", start_m = "base_momentum", end_m = "max_momentum" },
        { end_step = total - 1, start_lr = "initial_lr", end_lr = "min_lr", start_m = "max_momentum", end_m = "max_momentum" },
      }
    else
      self._phases = {
        { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr", start_m = "max_momentum", end_m = "base_momentum" },
        { end_step = total - 1, start_lr = "max_lr", end_lr = "min_lr", start_m = "base_momentum", end_m = "max_momentum" },
      }
    end
    local max_lrs = per_group(name, optimizer, max_lr, "max_lr")
    local last_epoch = opts.last_epoch or -1
    if last_epoch == -1 then
      for i, g in ipairs(optimizer.param_groups) do
        g.initial_lr = max_lrs[i] / div
        g.max_lr = max_lrs[i]
        g.min_lr = g.initial_lr / fdiv
      end
    end
    self.cycle_momentum = opts.cycle_momentum ~= false
    if self.cycle_momentum then
      local g1 = optimizer.param_groups[1]
      if g1.momentum == nil and g1.betas == nil then
        error("OneCycleLR: optimizer must support momentum or betas with option 'cycle_momentum' enabled", 0)
      end
      self.use_beta1 = g1.betas ~= nil
      local bm = per_group(name, optimizer, opts.base_momentum or 0.85, "base_momentum")
      local mm = per_group(name, optimizer, opts.max_momentum or 0.95, "max_momentum")
      if last_epoch == -1 then
        for i, g in ipairs(optimizer.param_groups) do
          if self.use_beta1 then g.betas = { mm[i], g.betas[2] } else g.momentum = mm[i] end
          g.max_momentum, g.base_momentum = mm[i], bm[i]
        end
      end
    end
    self:_base_init(optimizer, last_epoch)
  end
  function OneCycleLR:_anneal(s, e, pct)
    if self.anneal_strategy == "cos" then return e + (s - e) / 2 * (1 + math.cos(math.pi * pct)) end
    return (e - s) * pct + s
  end
  function OneCycleLR:get_lr()
    local r = {}
    local step = self.last_epoch
    if step > self.total_steps then
      error(("OneCycleLR: tried to step %d times, the total number of steps is %d"):format(step, self.total_steps), 0)
    end
    for i, g in ipairs(self.optimizer.param_groups) do
      local start = 0
      for k, ph in ipairs(self._phases) do
        if step <= ph.end_step or k == #self._phases then
          local pct = (step - start) / (ph.end_step - start)
          r[i] = self:_anneal(g[ph.start_lr], g[ph.end_lr], pct)
          if self.cycle_momentum then
            local m = self:_anneal(g[ph.start_m], g[ph.end_m], pct)
            if self.use_beta1 then g.betas = { m, g.betas[2] } else g.momentum = m end
          end
          break
        end
        start = ph.end_step
      end
    end
    return r
  end

  ------------------------------------------------------------ SequentialLR
  local SequentialLR = LRScheduler:extend("SequentialLR")
  S.SequentialLR = SequentialLR
  local SEQUENTIALLR = sig("SequentialLR", "optimizer, schedulers, milestones, last_epoch=-1")
  function SequentialLR:__init(...)
    local opts = SEQUENTIALLR(...)
    local optimizer, schedulers, milestones = opts.optimizer, opts.schedulers, opts.milestones
    check_optimizer("SequentialLR", optimizer)
    if type(schedulers) ~= "table" or #schedulers < 1 then
      error("SequentialLR: argument 'schedulers' must be a non-empty list of schedulers", 0)
    end
    for i, s in ipairs(schedulers) do
      if not rawequal(s.optimizer, optimizer) then
        error(("SequentialLR: scheduler %d is bound to a different optimizer than the one given"):format(i), 0)
      end
    end
    if type(milestones) ~= "table" or #milestones ~= #schedulers - 1 then
      error(("SequentialLR: expected %d milestones for %d schedulers, got %s"):format(#schedulers - 1, #schedulers,
        type(milestones) == "table" and tostring(#milestones) or type(milestones)), 0)
    end
    self._schedulers, self._milestones = schedulers, milestones
    self.last_epoch = (opts.last_epoch or -1) + 1
    self.optimizer = optimizer
    for _, g in ipairs(optimizer.param_groups) do g.lr = g.initial_lr end
    for _, s in ipairs(schedulers) do s.last_epoch = s.last_epoch - 1 end
    schedulers[1]:_initial_step()
    self._last_lr = schedulers[1]:get_last_lr()
  end
  function SequentialLR:step()
    self.last_epoch = self.last_epoch + 1
    local idx = bisect_right(self._milestones, self.last_epoch)
    local s = self._schedulers[idx + 1]
    if idx > 0 and self._milestones[idx] == self.last_epoch then s:step(0) else s:step() end
    self._last_lr = s:get_last_lr()
  end

  ------------------------------------------------------------ ReduceLROnPlateau
  local Plateau = class("optim.lr_scheduler.ReduceLROnPlateau")
  S.ReduceLROnPlateau = Plateau
  local REDUCELRONPLATEAU = sig("ReduceLROnPlateau", "optimizer, mode='min', factor=0.1, patience=10, " ..
    "threshold=1e-4, threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8")
  function Plateau:__init(...)
    local opts = REDUCELRONPLATEAU(...)
    local optimizer = opts.optimizer
    local name = "ReduceLROnPlateau"
    check_optimizer(name, optimizer)
    self.optimizer = optimizer
    self.mode = opts.mode or "min"
    self.threshold_mode = opts.threshold_mode or "rel"
    if self.mode ~= "min" and self.mode ~= "max" then error(name .. ": option 'mode' must be \"min\" or \"max\", got " .. tostring(self.mode), 0) end
    if self.threshold_mode ~= "rel" and self.threshold_mode ~= "abs" then
      error(name .. ": option 'threshold_mode' must be \"rel\" or \"abs\", got " .. tostring(self.threshold_mode), 0)
    end
    self.factor = opts.factor or 0.1
    if self.factor >= 1 then error(name .. ": option 'factor' should be < 1.0", 0) end
    self.patience = opts.patience or 10
    self.threshold = opts.threshold or 1e-4
    self.cooldown = opts.cooldown or 0
    self.cooldown_counter = 0
    self.min_lrs = per_group(name, optimizer, opts.min_lr or 0, "min_lr")
    self.eps = opts.eps or 1e-8
    self.last_epoch = 0
    self.best = self.mode == "min" and math.huge or -math.huge
    self.num_bad_epochs = 0
    self._last_lr = lrs(self)
  end
  function Plateau:is_better(a, best)
    if self.mode == "min" and self.threshold_mode == "rel" then return a < best * (1 - self.threshold)
    elseif self.mode == "min" then return a < best - self.threshold
    elseif self.threshold_mode == "rel" then return a > best * (self.threshold + 1)
    else return a > best + self.threshold end
  end
  function Plateau:step(metrics, epoch)
    local current = metrics
    if type(current) ~= "number" then
      if type(current) == "userdata" then current = current:item()
      else error("ReduceLROnPlateau: step: argument 'metrics' must be a number, got " .. type(current), 0) end
    end
    self.last_epoch = epoch or self.last_epoch + 1
    if self:is_better(current, self.best) then self.best = current; self.num_bad_epochs = 0
    else self.num_bad_epochs = self.num_bad_epochs + 1 end
    if self.cooldown_counter > 0 then
      self.cooldown_counter = self.cooldown_counter - 1
      self.num_bad_epochs = 0
    end
    if self.num_bad_epochs > self.patience then
      for i, g in ipairs(self.optimizer.param_groups) do
        local old = g.lr
        local new = math.max(old * self.factor, self.min_lrs[i])
        if old - new > self.eps then g.lr = new end
      end
      self.cooldown_counter = self.cooldown
      self.num_bad_epochs = 0
    end
    self._last_lr = lrs(self)
  end
  Plateau.get_last_lr = LRScheduler.get_last_lr
  Plateau.state_dict = LRScheduler.state_dict
  Plateau.load_state_dict = LRScheduler.load_state_dict

  return S
end
