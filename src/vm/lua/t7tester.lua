-- t7tester.lua — torch.Tester and torch.TestSuite, Torch7's unit-test API,
-- installed by Torch7 mode (torch._t7_tester(torch), called from
-- torch7.lua). Written for lutorch from Torch7's documentation (doc/tester.md)
-- and the behaviour its own test_Tester.lua checks: assertions return
-- (ok, message) through the overridable _success/_failure, counts per test,
-- _setUp/_tearDown, warnings, early abort, rethrow, and run() raising when a
-- test failed so that a test script exits non-zero.
local torch = ...

function torch._t7_tester(torch)
  local WIDTH = 80

  -- the optional message of an assertion; anything after it is a mistake
  local function message_of(m, ...)
    assert(select("#", ...) == 0, "Unexpected arguments passed to test function")
    if m == nil or m == "" then return "" end
    assert(type(m) == "string", "message parameter must be a string")
    return m .. "\n"
  end

  -- a tolerance and a message, in either order
  local function tolerance_and_message(default, ...)
    local tol, msg
    for _, a in ipairs({ ... }) do
      if type(a) == "string" then
        if msg then error("Unexpected string argument; already have message", 3) end
        msg = a .. "\n"
      elseif type(a) == "number" then
        if tol then error("Unexpected number argument; already have tolerance", 3) end
        assert(a >= 0, "tolerance cannot be negative")
        tol = a
      else
        error("Unrecognized argument; should be a tolerance or message", 3)
      end
    end
    return tol or default, msg or ""
  end

  ---------------------------------------------------------------------------
  -- comparisons: each returns success (already negated when asked) and why
  ---------------------------------------------------------------------------
  local eq_any

  -- the largest elementwise difference of two tensors of one type and size;
  -- NaN against NaN is no difference, NaN against a number is
  local function max_diff(a, b)
    if a:nElement() == 0 then return 0 end
    local da, db = a:double(), b:double()
    local err = (da - db):abs():max()
    if torch.isTensor(err) then err = err:item() end
    if err == err then return err end
    local x, y = da:contiguous():view(-1):totable(), db:contiguous():view(-1):totable()
    err = 0
    for i = 1, #x do
      local d
      if x[i] ~= x[i] or y[i] ~= y[i] then d = (x[i] ~= x[i] and y[i] ~= y[i]) and 0 or math.huge
      elseif x[i] == y[i] then d = 0 else d = math.abs(x[i] - y[i]) end
      if d > err then err = d end
    end
    return err
  end

  local function same_format_eq(a, b, tol, negate, what)
    local err = max_diff(a, b)
    local ok = err <= tol
    if negate then ok = not ok end
    if ok then return true end
    return false, ("%s%s violation: max diff=%s, tolerance=%s"):format(what, negate and "NE(==)" or "EQ(==)",
      tostring(err), tostring(tol))
  end

  local function tensors_eq(a, b, tol, negate, ignore_dims)
    if not ignore_dims and a:dim() ~= b:dim() then return negate, "The tensors have different dimensions" end
    if a:type() ~= b:type() then return negate, "The tensors have different types" end
    if a:dim() == 0 and b:dim() == 0 then return not negate, "Both tensors are empty" end
    local same
    if ignore_dims then same = a:nElement() == b:nElement() else same = a:isSameSizeAs(b) end
    if not same then return negate, "The tensors have different sizes" end
    return same_format_eq(a, b, tol, negate, "Tensor")
  end

  local function storages_eq(a, b, tol, negate)
    if a:size() ~= b:size() then return negate, "The storages have different sizes" end
    if torch.type(a) ~= torch.type(b) then return negate, "The storages have different types" end
    return same_format_eq(a:data(), b:data(), tol, negate, "Storage")
  end

  -- tables level by level, so that a difference is reported where it is shallowest
  local function tables_eq(t1, t2, tol, negate)
    local queue, head = { { t1, t2, nil } }, 1
    while queue[head] do
      local a, b, where = table.unpack(queue[head])
      head = head + 1
      local function at(k) return where and (where .. "." .. tostring(k)) or tostring(k) end
      for k, va in pairs(a) do
        local vb = b[k]
        if vb == nil then
          return negate, ("Entry %s missing in second table (is %s in first)"):format(at(k), tostring(va))
        end
        if type(va) == "table" and type(vb) == "table" then
          queue[#queue + 1] = { va, vb, at(k) }
        else
          local ok, why = eq_any(va, vb, tol, false)
          if not ok then return negate, "At table location " .. at(k) .. ": " .. why end
        end
      end
      for k, vb in pairs(b) do
        if a[k] == nil then
          return negate, ("Entry %s missing in first table (is %s in second)"):format(at(k), tostring(vb))
        end
      end
    end
    return not negate, "The tables are equal"
  end

  eq_any = function(got, want, tol, negate)
    if type(got) ~= type(want) then
      if negate then return true end
      return false, ("EQ failed: values have different types (first: %s, second: %s)"):format(type(got), type(want))
    end
    if type(got) == "number" then
      local ok = math.abs(got - want) <= tol or got == want
      if negate then ok = not ok end
      if ok then return true end
      local why = (negate and "NE failed: %s == %s" or "EQ failed: %s ~= %s"):format(tostring(got), tostring(want))
      if tol > 0 then why = why .. " with tolerance=" .. tostring(tol) end
      return false, why
    end
    if torch.isStorage and torch.isStorage(got) and torch.isStorage(want) then return storages_eq(got, want, tol, negate) end
    if type(want) == "table" then return tables_eq(got, want, tol, negate) end
    if torch.isTensor(got) then return tensors_eq(got, want, tol, negate, false) end
    local ok = got == want
    if negate then ok = not ok end
    if ok then return true end
    return false, ((negate and "NE failed: %s (%s) == %s (%s)" or "EQ failed: %s (%s) ~= %s (%s)"):format(
      tostring(got), type(got), tostring(want), type(want)))
  end

  ---------------------------------------------------------------------------
  -- the Tester
  ---------------------------------------------------------------------------
  local Tester
  if torch.class then
    Tester = torch.class("torch.Tester", torch)
  else
    -- loaded outside Torch7 mode (tools/torch7_suite.lua): a plain class
    Tester = {}
    Tester.__index = Tester
    torch.Tester = setmetatable({}, {
      __index = Tester,
      __call = function(_, ...) local t = setmetatable({}, Tester); t:__init(...); return t end,
    })
  end

  function Tester:__init()
    self.errors, self.warnings = {}, {}
    self.tests, self.disabledTests = {}, {}
    self._warningCount = {}
    self._currentTestName = ""
    -- assertTensorEq compares contents: {{1}} equals {1} (with a warning)
    self._assertTensorEqIgnoresDims = true
    self.assertionPass, self.assertionFail, self.testError = {}, {}, {}
  end

  function Tester:setEarlyAbort(v) self.earlyAbort = v end
  function Tester:setRethrowErrors(v) self.rethrow = v end
  function Tester:setSummaryOnly(v) self.summaryOnly = v end

  -- where in the test the assertion was made: the first frame outside this file
  local here = debug.getinfo(1, "S").source
  local function where_asserted()
    for level = 3, 40 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source ~= here and info.what ~= "C" then return info.short_src .. ":" .. (info.currentline or 0) end
    end
    return "?"
  end
  function Tester:_addDebugInfo(message)
    local name = self._currentTestName
    return (name ~= "" and (name .. "\n") or "") .. message .. "\n" .. where_asserted()
  end

  local function bump(t, name) t[name] = (t[name] or 0) + 1 end
  function Tester:_success()
    bump(self.assertionPass, self._currentTestName)
    return true
  end
  function Tester:_failure(message)
    if self.rethrow then error(message, 2) end
    bump(self.assertionFail, self._currentTestName)
    self.errors[#self.errors + 1] = self:_addDebugInfo(message)
    return false
  end
  function Tester:_warning(message)
    bump(self._warningCount, self._currentTestName)
    self.warnings[#self.warnings + 1] = self:_addDebugInfo(message)
  end
  function Tester:_assert_sub(ok, message)
    if ok then return self:_success() end
    return self:_failure(message)
  end

  function Tester:assert(cond, ...)
    local m = message_of(...)
    if type(cond) ~= "boolean" then
      self:_warning(" :assert should only be used for boolean conditions. To check for non-nil "
        .. "variables, do this explicitly: Tester:assert(var ~= nil).")
    end
    return self:_assert_sub(cond, m .. "BOOL violation condition=" .. tostring(cond))
  end
  local function compare(name, op, fmt)
    Tester[name] = function(self, a, b, ...)
      local m = message_of(...)
      return self:_assert_sub(op(a, b), m .. fmt:format(tostring(a), tostring(b)))
    end
  end
  compare("assertlt", function(a, b) return a < b end, "LT failed: %s >= %s")
  compare("assertgt", function(a, b) return a > b end, "GT failed: %s <= %s")
  compare("assertle", function(a, b) return a <= b end, "LE failed: %s > %s")
  compare("assertge", function(a, b) return a >= b end, "GE failed: %s < %s")
  compare("asserteq", function(a, b) return a == b end, "EQ failed: %s ~= %s")
  function Tester:assertne(a, b, ...)
    local m = message_of(...)
    if (type(a) == "table" and type(b) == "table") or type(a) == "userdata" then
      self:_warning(" :assertne should only be used to compare basic lua objects (numbers, booleans, "
        .. "etc). Consider using either :assertGeneralNe or :assert(a ~= b).")
    end
    return self:_assert_sub(a ~= b, m .. ("NE failed: %s == %s"):format(tostring(a), tostring(b)))
  end
  function Tester:assertalmosteq(a, b, ...)
    local tol, m = tolerance_and_message(1e-16, ...)
    return self:_assert_sub(math.abs(a - b) <= tol,
      ("%sALMOST_EQ failed: %s ~= %s with tolerance=%s"):format(m, tostring(a), tostring(b), tostring(tol)))
  end

  function Tester:_eqOrNeq(got, want, negate, ...)
    local tol, m = tolerance_and_message(0, ...)
    local ok, why = eq_any(got, want, tol, negate)
    return self:_assert_sub(ok, m .. (why or ""))
  end
  function Tester:assertGeneralEq(a, b, ...) return self:_eqOrNeq(a, b, false, ...) end
  function Tester:assertGeneralNe(a, b, ...) return self:_eqOrNeq(a, b, true, ...) end
  function Tester:eq(a, b, ...) return self:_eqOrNeq(a, b, false, ...) end
  function Tester:ne(a, b, ...) return self:_eqOrNeq(a, b, true, ...) end

  function Tester:_assertTensorEqOrNeq(a, b, negate, ...)
    assert(torch.isTensor(a), "First argument should be a Tensor")
    assert(torch.isTensor(b), "Second argument should be a Tensor")
    local tol, m = tolerance_and_message(0, ...)
    local ok, why = tensors_eq(a, b, tol, negate, self._assertTensorEqIgnoresDims)
    if self._assertTensorEqIgnoresDims and not negate and ok and not a:isSameSizeAs(b) then
      self:_warning("Tensors have the same content but different dimensions. For backwards "
        .. "compatibility, they are considered equal, but this may change in the future. "
        .. "Consider using :eq to check for equality instead.")
    end
    return self:_assert_sub(ok, m .. (why or ""))
  end
  function Tester:assertTensorEq(a, b, ...) return self:_assertTensorEqOrNeq(a, b, false, ...) end
  function Tester:assertTensorNe(a, b, ...) return self:_assertTensorEqOrNeq(a, b, true, ...) end
  function Tester:_assertTableEqOrNeq(a, b, negate, ...)
    assert(type(a) == "table", "First argument should be a Table")
    assert(type(b) == "table", "Second argument should be a Table")
    return self:_eqOrNeq(a, b, negate, ...)
  end
  function Tester:assertTableEq(a, b, ...) return self:_assertTableEqOrNeq(a, b, false, ...) end
  function Tester:assertTableNe(a, b, ...) return self:_assertTableEqOrNeq(a, b, true, ...) end

  function Tester:assertErrorObj(f, check, ...)
    local m = message_of(...)
    local ok, err = pcall(f)
    return self:_assert_sub(not ok and check(err), ("%sERROR violation: err=%s"):format(m, tostring(err)))
  end
  function Tester:assertError(f, ...) return self:assertErrorObj(f, function() return true end, ...) end
  function Tester:assertErrorMsg(f, e, ...) return self:assertErrorObj(f, function(err) return err == e end, ...) end
  function Tester:assertErrorPattern(f, p, ...)
    return self:assertErrorObj(f, function(err) return tostring(err):find(p) ~= nil end, ...)
  end
  function Tester:assertNoError(f, ...)
    local m = message_of(...)
    local ok, err = pcall(f)
    return self:_assert_sub(ok, ("%sERROR violation: err=%s"):format(m, tostring(err)))
  end

  -- add(fn [, name]) or add(suite): _setUp and _tearDown run around each test
  function Tester:add(f, name)
    if type(f) == "table" then
      assert(name == nil, "Name parameter is forbidden for a table of tests, since its use is ambiguous")
      local tests = f
      if rawget(f, "__isTestSuite") then tests = rawget(f, "__tests")
      else self:_warning("Should use TestSuite rather than plain lua table") end
      for k, v in pairs(tests) do
        assert(type(v) ~= "table", "Nested sets of tests are not supported")
        self:add(v, k)
      end
      return self
    end
    assert(type(f) == "function", "Only tables of functions and functions supported")
    if name == "_setUp" then
      assert(not self._setUp, "Only one set-up function allowed")
      self._setUp = f
    elseif name == "_tearDown" then
      assert(not self._tearDown, "Only one tear-down function allowed")
      self._tearDown = f
    else
      name = name or "unknown"
      if self.tests[name] ~= nil then error("Test with name " .. name .. " already exists!", 2) end
      self.tests[name] = f
    end
    return self
  end

  function Tester:disable(names)
    if type(names) == "string" then names = { names } end
    assert(type(names) == "table", "Expecting name or list for disable")
    for _, n in ipairs(names) do
      assert(self.tests[n], "Unrecognized test '" .. tostring(n) .. "'")
      self.disabledTests[n] = true
    end
    return self
  end

  -- the tests whose names match the patterns given (all when nil), sorted
  function Tester:_getTests(which)
    local chosen = {}
    if which == nil then
      for n in pairs(self.tests) do chosen[n] = true end
    else
      if type(which) == "string" then which = { which } end
      assert(type(which) == "table", "Only accept a name or table of test names (or nil for all tests)")
      for _, pat in ipairs(which) do
        local any = false
        for n in pairs(self.tests) do
          if n:match(pat) then chosen[n] = true; any = true end
        end
        assert(any, "Couldn't find test '" .. tostring(pat) .. "'")
      end
    end
    local names = {}
    for n in pairs(chosen) do names[#names + 1] = n end
    table.sort(names)
    return names
  end

  local function count(n, what) return n .. " " .. what .. (n == 1 and "" or "s") end

  function Tester:run(which)
    local names = self:_getTests(which)
    self.assertionPass, self.assertionFail, self.testError = {}, {}, {}
    for _, n in ipairs(names) do
      self.assertionPass[n], self.assertionFail[n], self.testError[n] = 0, 0, 0
      self._warningCount[n] = 0
    end
    self:_run(names)
    self:_report(names)
    for _, n in ipairs(names) do
      assert(self.assertionFail[n] == 0 and self.testError[n] == 0, "An error was found while running tests!")
    end
    return 0
  end

  function Tester:_pcall(f)
    local before = #self.errors
    local ok, err = xpcall(f, debug.traceback)
    if not ok then
      self.errors[#self.errors + 1] = self._currentTestName .. "\n Function call failed\n" .. tostring(err) .. "\n"
    end
    return ok, err, ok and before == #self.errors
  end

  function Tester:_run(names)
    local total = #names
    local numw = #tostring(total)
    io.write("Running " .. count(total, "test") .. "\n")
    self.nrun, self.nfailed = 0, 0
    for i, n in ipairs(names) do
      self._currentTestName = n
      local head = ("%" .. numw .. "d/%d %s "):format(i, total, n)
      head = head .. ("."):rep(math.max(0, WIDTH - 8 - #head)) .. " "
      io.write(head .. "[WAIT]")
      io.flush()
      local state
      if self.disabledTests[n] then
        state = "SKIP"
      else
        if self._setUp then self._setUp(n) end
        local ok, passed
        if self.rethrow then
          local before = #self.errors
          self.tests[n]()
          ok, passed = true, before == #self.errors
        else
          ok, _, passed = self:_pcall(self.tests[n])
        end
        if self._tearDown then self._tearDown(n) end
        self.nrun = self.nrun + 1
        if not ok then self.testError[n] = 1; state = "ERROR"
        elseif not passed then state = "FAIL"
        else state = "PASS" end
        if state ~= "PASS" then self.nfailed = self.nfailed + 1 end
      end
      io.write("\r" .. head .. "[" .. state .. "]")
      if state == "PASS" and (self._warningCount[n] or 0) > 0 then
        io.write("\n" .. (" "):rep(WIDTH - 10) .. "[+warning]")
      end
      io.write("\n")
      io.flush()
      if self.earlyAbort and i < total and (state == "FAIL" or state == "ERROR") then
        io.write("Aborting on first error, not all tests have been executed\n")
        break
      end
    end
    self._currentTestName = ""
  end

  function Tester:_report(names)
    local nfail, nerr, nwarn, nskip = 0, 0, 0, 0
    self.countasserts = 0
    for _, n in ipairs(names) do
      self.countasserts = self.countasserts + self.assertionPass[n] + self.assertionFail[n]
      if self.assertionFail[n] > 0 then nfail = nfail + 1 end
      if self.testError[n] > 0 then nerr = nerr + 1 end
      if (self._warningCount[n] or 0) > 0 then nwarn = nwarn + 1 end
      if self.disabledTests[n] then nskip = nskip + 1 end
    end
    nwarn = nwarn + (self._warningCount[""] or 0)
    local line = ("Completed %s in %s with %s and %s"):format(count(self.countasserts, "assert"),
      count(#names, "test"), count(nfail, "failure"), count(nerr, "error"))
    if nwarn > 0 then line = line .. " and " .. count(nwarn, "warning") end
    if nskip > 0 then line = line .. " and " .. nskip .. " disabled" end
    io.write(line .. "\n")
    if self.summaryOnly then return end
    local rule = ("-"):rep(WIDTH) .. "\n"
    local first = true
    for _, list in ipairs({ self.errors, self.warnings }) do
      for _, text in ipairs(list) do
        if first then io.write(rule); first = false end
        io.write(text .. "\n" .. rule)
      end
    end
  end

  -- a table of test functions that refuses a name twice and anything else
  function torch.TestSuite()
    local suite = { __tests = {}, __isTestSuite = true }
    return setmetatable(suite, {
      __index = function(s, k) return rawget(s, "__tests")[k] end,
      __newindex = function(s, k, v)
        local tests = rawget(s, "__tests")
        if tests[k] ~= nil then error("Test " .. tostring(k) .. " is already defined.", 2) end
        if type(v) == "table" then error("Nested tables of tests are not supported", 2) end
        if type(v) ~= "function" then error("Only functions are supported as members of a TestSuite", 2) end
        tests[k] = v
      end,
    })
  end
end
