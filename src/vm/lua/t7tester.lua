-- t7tester.lua — torch.Tester and torch.TestSuite, Torch7's unit-test API,
-- installed by Torch7 mode (torch._t7_tester(torch), called from
-- torch7.lua). Written for lutorch: the assertions and their argument rules
-- follow Torch7's documentation (doc/tester.md).
local torch = ...

function torch._t7_tester(torch)
  -- tolerance and message may come in either order
  local function tol_msg(default, ...)
    local tol, msg
    for _, a in ipairs({ ... }) do
      if type(a) == "string" then msg = a
      elseif type(a) == "number" then
        if a < 0 then error("Tester: the tolerance cannot be negative", 3) end
        tol = a
      else error("Tester: expected a tolerance or a message, got " .. type(a), 3) end
    end
    return tol or default, msg and (msg .. "\n") or ""
  end
  local function msg_of(m) return (m and m ~= "") and (m .. "\n") or "" end

  -- the elements of a tensor as a flat Lua list of numbers
  local function flat(t)
    local n = t:nElement()
    if n == 0 then return {} end
    local v = t:contiguous():view(n):totable()
    for i = 1, #v do if type(v[i]) == "boolean" then v[i] = v[i] and 1 or 0 end end
    return v
  end

  local function tensors_eq(a, b, tol)
    if a:nElement() ~= b:nElement() then
      return false, ("the tensors have %d and %d elements"):format(a:nElement(), b:nElement())
    end
    local x, y = flat(a), flat(b)
    local worst = 0
    for i = 1, #x do
      local d
      if x[i] ~= x[i] and y[i] ~= y[i] then d = 0       -- NaN matches NaN
      elseif x[i] == y[i] then d = 0                    -- infinities
      else d = math.abs(x[i] - y[i]) end
      if d ~= d then d = math.huge end
      if d > worst then worst = d end
    end
    if worst > tol then return false, ("the largest difference is %g, the tolerance %g"):format(worst, tol) end
    return true
  end

  local function general_eq(a, b, tol, seen)
    if torch.isTensor(a) and torch.isTensor(b) then return tensors_eq(a, b, tol) end
    if type(a) == "number" and type(b) == "number" then
      if a == b or math.abs(a - b) <= tol then return true end
      return false, ("%s ~= %s"):format(tostring(a), tostring(b))
    end
    if type(a) == "table" and type(b) == "table" then
      seen = seen or {}
      if seen[a] == b then return true end
      seen[a] = b
      for k, v in pairs(a) do
        local ok, why = general_eq(v, b[k], tol, seen)
        if not ok then return false, ("at key %s: %s"):format(tostring(k), why or "differs") end
      end
      for k in pairs(b) do
        if a[k] == nil then return false, ("key %s is missing from the first table"):format(tostring(k)) end
      end
      return true
    end
    if a == b then return true end
    return false, ("%s ~= %s"):format(tostring(a), tostring(b))
  end

  local Tester = {}
  Tester.__index = Tester
  Tester.__typename = "torch.Tester"

  local function new_tester()
    return setmetatable({ tests = {}, names = {}, results = {}, earlyAbort = false, rethrow = false,
                          summaryOnly = false, _assertTensorEqIgnoresDims = true }, Tester)
  end
  torch.Tester = setmetatable({}, { __call = function() return new_tester() end, __index = Tester })

  function Tester:setEarlyAbort(v) self.earlyAbort = v end
  function Tester:setRethrowErrors(v) self.rethrow = v end
  function Tester:setSummaryOnly(v) self.summaryOnly = v end

  function Tester:_assert_sub(ok, message)
    local r = self._current
    if r then
      if ok then r.passed = r.passed + 1
      else
        r.failed = r.failed + 1
        r.messages[#r.messages + 1] = message .. "\n" .. debug.traceback("", 3)
        if self.earlyAbort then error({ _t7_abort = true }, 0) end
      end
    end
    return ok
  end

  function Tester:assert(cond, m) return self:_assert_sub(cond, msg_of(m) .. "BOOL violation condition=" .. tostring(cond)) end
  function Tester:assertlt(a, b, m) return self:_assert_sub(a < b, ("%sLT failed: %s >= %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:assertgt(a, b, m) return self:_assert_sub(a > b, ("%sGT failed: %s <= %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:assertle(a, b, m) return self:_assert_sub(a <= b, ("%sLE failed: %s > %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:assertge(a, b, m) return self:_assert_sub(a >= b, ("%sGE failed: %s < %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:asserteq(a, b, m) return self:_assert_sub(a == b, ("%sEQ failed: %s ~= %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:assertne(a, b, m) return self:_assert_sub(a ~= b, ("%sNE failed: %s == %s"):format(msg_of(m), tostring(a), tostring(b))) end
  function Tester:assertalmosteq(a, b, ...)
    local tol, m = tol_msg(1e-16, ...)
    return self:_assert_sub(math.abs(a - b) <= tol,
      ("%sALMOST_EQ failed: %s ~= %s with tolerance=%s"):format(m, tostring(a), tostring(b), tostring(tol)))
  end
  local function eq_or_ne(self, a, b, negate, ...)
    local tol, m = tol_msg(0, ...)
    local ok, why = general_eq(a, b, tol)
    if negate then ok = not ok; why = "the values are equal" end
    return self:_assert_sub(ok, m .. (why or ""))
  end
  function Tester:assertGeneralEq(a, b, ...) return eq_or_ne(self, a, b, false, ...) end
  function Tester:assertGeneralNe(a, b, ...) return eq_or_ne(self, a, b, true, ...) end
  Tester.eq, Tester.ne = Tester.assertGeneralEq, Tester.assertGeneralNe
  function Tester:assertTensorEq(a, b, ...)
    assert(torch.isTensor(a), "assertTensorEq: the first argument should be a tensor")
    assert(torch.isTensor(b), "assertTensorEq: the second argument should be a tensor")
    return eq_or_ne(self, a, b, false, ...)
  end
  function Tester:assertTensorNe(a, b, ...)
    assert(torch.isTensor(a), "assertTensorNe: the first argument should be a tensor")
    assert(torch.isTensor(b), "assertTensorNe: the second argument should be a tensor")
    return eq_or_ne(self, a, b, true, ...)
  end
  function Tester:assertTableEq(a, b, ...)
    assert(type(a) == "table", "assertTableEq: the first argument should be a table")
    assert(type(b) == "table", "assertTableEq: the second argument should be a table")
    return eq_or_ne(self, a, b, false, ...)
  end
  function Tester:assertTableNe(a, b, ...)
    assert(type(a) == "table", "assertTableNe: the first argument should be a table")
    assert(type(b) == "table", "assertTableNe: the second argument should be a table")
    return eq_or_ne(self, a, b, true, ...)
  end
  function Tester:assertErrorObj(f, check, m)
    local ok, err = pcall(f)
    return self:_assert_sub(not ok and check(err), ("%sERROR violation: err=%s"):format(msg_of(m), tostring(err)))
  end
  function Tester:assertError(f, m) return self:assertErrorObj(f, function() return true end, m) end
  function Tester:assertErrorMsg(f, e, m) return self:assertErrorObj(f, function(err) return err == e end, m) end
  function Tester:assertErrorPattern(f, p, m)
    return self:assertErrorObj(f, function(err) return tostring(err):find(p) ~= nil end, m)
  end
  function Tester:assertNoError(f, m)
    local ok, err = pcall(f)
    return self:_assert_sub(ok, ("%sERROR violation: err=%s"):format(msg_of(m), tostring(err)))
  end

  function Tester:add(f, name)
    if type(f) == "table" then
      local tests = f.__isTestSuite and f.__tests or f
      local names = {}
      for k in pairs(tests) do names[#names + 1] = k end
      table.sort(names)
      for _, k in ipairs(names) do self:add(tests[k], k) end
      return self
    end
    if type(f) ~= "function" then error("Tester:add: expected a function or a table of functions", 2) end
    name = name or ("test" .. (#self.names + 1))
    if self.tests[name] then error("Tester:add: a test named '" .. name .. "' exists already", 2) end
    self.tests[name] = f
    self.names[#self.names + 1] = name
    return self
  end

  function Tester:disable(names)
    if type(names) == "string" then names = { names } end
    for _, n in ipairs(names) do self.tests[n] = nil end
    return self
  end

  -- run the named tests (a name or a list; all when nil); prints a summary
  function Tester:run(which)
    if type(which) == "string" then which = { which } end
    local list = {}
    if which then
      for _, n in ipairs(which) do
        if not self.tests[n] then error("Tester:run: no test named '" .. n .. "'", 2) end
        list[#list + 1] = n
      end
    else
      for _, n in ipairs(self.names) do if self.tests[n] then list[#list + 1] = n end end
    end
    self.nrun, self.nfailed, self.nerrors = 0, 0, 0
    for _, n in ipairs(list) do
      local r = { passed = 0, failed = 0, messages = {} }
      self.results[n] = r
      self._current = r
      local ok, err = xpcall(self.tests[n], function(e)
        if type(e) == "table" and e._t7_abort then return e end
        return debug.traceback(tostring(e), 2)
      end)
      self._current = nil
      self.nrun = self.nrun + 1
      if not ok and not (type(err) == "table" and err._t7_abort) then
        r.error = err
        self.nerrors = self.nerrors + 1
        if self.rethrow then error(err, 0) end
      end
      if r.failed > 0 or r.error then self.nfailed = self.nfailed + 1 end
      if not self.summaryOnly then
        io.write(("%-40s %s\n"):format(n, (r.failed > 0 or r.error) and "FAIL" or "ok"))
        for _, m in ipairs(r.messages) do io.write("  ", m:gsub("\n", "\n  "), "\n") end
        if r.error then io.write("  ERROR: ", tostring(r.error):gsub("\n", "\n  "), "\n") end
      end
      if self.earlyAbort and (r.failed > 0 or r.error) then break end
    end
    io.write(("%d tests, %d failed\n"):format(self.nrun, self.nfailed))
    return self.nfailed == 0
  end

  -- a table of tests that refuses a name twice
  torch.TestSuite = function()
    local tests = {}
    return setmetatable({}, {
      __index = function(_, k) if k == "__tests" then return tests elseif k == "__isTestSuite" then return true end return tests[k] end,
      __newindex = function(_, k, v)
        if tests[k] ~= nil then error("TestSuite: a test named '" .. tostring(k) .. "' exists already", 2) end
        tests[k] = v
      end,
      __pairs = function() return next, tests, nil end,
    })
  end
end
