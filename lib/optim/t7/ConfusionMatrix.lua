-- optim.ConfusionMatrix(nclasses [, classes]) or (classes): Torch7's confusion matrix.
-- mat[target][prediction] counts (an int64 nclasses x nclasses tensor); add(prediction, target)
-- takes class indices or vectors of scores (their argmax); batchAdd(predictions, targets) a
-- vector of indices or a matrix of scores per row; targets below 1 are ignored. updateValids()
-- sets valids (per class: correct / row total), unionvalids (correct / (row + column -
-- correct)), totalValid, averageValid and averageUnionValid (means over the classes seen).
-- farFrr() gives the false acceptance and rejection rates; tostring(cm) Torch7's table.
local torch = require "torch"

local CM = {}
CM.__index = CM
CM.__typename = "optim.ConfusionMatrix"
CM.__name = "optim.ConfusionMatrix"

local function bad(fmt, ...) error("optim.ConfusionMatrix: " .. fmt:format(...), 3) end

local function new(_, nclasses, classes)
  if type(nclasses) == "table" then classes, nclasses = nclasses, #nclasses end
  if math.type(nclasses) ~= "integer" and not (type(nclasses) == "number" and nclasses % 1 == 0) then
    bad("argument 'nclasses' must be an integer or a list of class names")
  end
  nclasses = math.tointeger(nclasses)
  if nclasses < 1 then bad("argument 'nclasses' must be positive") end
  local self = setmetatable({}, CM)
  self.mat = torch.zeros({ nclasses, nclasses }, { dtype = torch.int64 })
  self.valids = torch.zeros({ nclasses }, { dtype = torch.float32 })
  self.unionvalids = torch.zeros({ nclasses }, { dtype = torch.float32 })
  self.nclasses = nclasses
  self.totalValid = 0
  self.averageValid = 0
  self.averageUnionValid = 0
  self.classes = classes or {}
  return self
end
setmetatable(CM, { __call = new, __tostring = function() return "optim.ConfusionMatrix" end })

-- the 1-based index of the largest element of a 1-D tensor (the first one of equals)
local function argmax(t)
  local v = t:reshape(-1):totable()
  local k = 1
  for i = 2, #v do if v[i] > v[k] then k = i end end
  return k
end

-- a class index from a number or a vector of scores
local function class_of(v, what, n)
  if type(v) == "number" then return v end
  if torch.is_tensor(v) then
    if v:dim() ~= 1 then bad("argument '%s' must be a number or a 1-D tensor", what) end
    return argmax(v)
  end
  bad("argument '%s' must be a number or a 1-D tensor, got %s", what, type(v))
end

function CM:_add(p, t)
  if t > 0 then
    if p < 1 or p > self.nclasses or t > self.nclasses or p % 1 ~= 0 or t % 1 ~= 0 then
      bad("class index out of range (prediction %s, target %s, %d classes)", tostring(p), tostring(t), self.nclasses)
    end
    local flat = self.mat:view(-1)
    local k = (math.tointeger(t) - 1) * self.nclasses + math.tointeger(p)
    flat[k] = flat[k] + 1
  end
end

function CM:add(prediction, target)
  self:_add(class_of(prediction, "prediction"), class_of(target, "target"))
end

-- a list of class indices from a vector of indices or a matrix of scores (one row per sample)
local function classes_of(v, what)
  if not torch.is_tensor(v) then bad("argument '%s' must be a tensor", what) end
  if v:dim() == 1 then return v:totable() end
  if v:dim() == 2 then
    local rows = v:totable()
    local out = {}
    for i, r in ipairs(rows) do
      if #r == 1 then out[i] = r[1]
      else
        local k = 1
        for j = 2, #r do if r[j] > r[k] then k = j end end
        out[i] = k
      end
    end
    return out
  end
  bad("%s has invalid number of dimensions (%d)", what, v:dim())
end

function CM:batchAdd(predictions, targets)
  local p, t = classes_of(predictions, "predictions"), classes_of(targets, "targets")
  if #p ~= #t then bad("%d predictions for %d targets", #p, #t) end
  for i = 1, #p do if t[i] >= 1 then self:_add(math.floor(p[i]), math.floor(t[i])) end end
end

function CM:zero()
  self.mat:zero_()
  self.valids:zero_()
  self.unionvalids:zero_()
  self.totalValid = 0
  self.averageValid = 0
  self.averageUnionValid = 0
end

function CM:updateValids()
  local m = self.mat:totable()
  local n = self.nclasses
  local rows, cols, total, sum = {}, {}, 0, 0
  for t = 1, n do
    rows[t], cols[t] = 0, 0
  end
  for t = 1, n do
    for p = 1, n do rows[t] = rows[t] + m[t][p]; cols[p] = cols[p] + m[t][p]; sum = sum + m[t][p] end
  end
  local valids, unions = {}, {}
  for t = 1, n do
    local d = m[t][t]
    valids[t] = d / rows[t]
    unions[t] = d / (rows[t] + cols[t] - d)
    total = total + d
    self.valids[t] = valids[t]
    self.unionvalids[t] = unions[t]
  end
  self.totalValid = total / sum
  local av, nv, au, nu = 0, 0, 0, 0
  for t = 1, n do
    if valids[t] == valids[t] then
      av, nv = av + valids[t], nv + 1
      if unions[t] == unions[t] then au, nu = au + unions[t], nu + 1 end
    end
  end
  self.averageValid = av / nv
  self.averageUnionValid = au / nu
end

function CM:farFrr()
  local m = self.mat:totable()
  local n = #m
  local counts = {}
  for i = 1, n do
    counts[i] = 0
    for j = 1, n do counts[i] = counts[i] + m[i][j] end
  end
  local classFrrs, classFars, frrs, fars = {}, {}, {}, {}
  for i = 1, n do
    classFrrs[i], classFars[i] = -1, -1
    if counts[i] ~= 0 then
      local frr = 1 - m[i][i] / counts[i]
      local num, den = 0, 0
      for j = 1, n do
        if j ~= i and counts[j] ~= 0 then num, den = num + m[j][i] / counts[j], den + 1 end
      end
      local far = num / den
      classFrrs[i], classFars[i] = frr, far
      frrs[#frrs + 1], fars[#fars + 1] = frr, far
    end
  end
  local function T(v)
    local t = torch.zeros({ #v }, { dtype = torch.float64 })
    for i = 1, #v do t[i] = v[i] end
    return t
  end
  return T(classFrrs), T(classFars), T(frrs), T(fars)
end

function CM:__tostring()
  self:updateValids()
  local m = self.mat:totable()
  local n = self.nclasses
  local maxCnt = 0
  for t = 1, n do for p = 1, n do maxCnt = math.max(maxCnt, m[t][p]) end end
  local nDigits = maxCnt > 0 and math.max(8, 1 + math.ceil(math.log(maxCnt, 10))) or 8
  local named = self.classes and self.classes[1] ~= nil
  local s = { "ConfusionMatrix:\n", "[" }
  local valids = self.valids:totable()
  for t = 1, n do
    s[#s + 1] = t == 1 and "[" or " ["
    for p = 1, n do s[#s + 1] = ("%" .. nDigits .. "d"):format(math.tointeger(m[t][p]) or m[t][p]) end
    local pclass = ("%2.3f"):format(valids[t] * 100)
    s[#s + 1] = (t == n and "]]  " or "]   ") .. pclass .. "% "
    if named then s[#s + 1] = "\t[class: " .. tostring(self.classes[t] or "") .. "]" end
    s[#s + 1] = "\n"
  end
  s[#s + 1] = " + average row correct: " .. (self.averageValid * 100) .. "% \n"
  s[#s + 1] = " + average rowUcol correct (VOC measure): " .. (self.averageUnionValid * 100) .. "% \n"
  s[#s + 1] = " + global correct: " .. (self.totalValid * 100) .. "%"
  return table.concat(s)
end
CM.__tostring__ = CM.__tostring

function CM:render()
  error("optim.ConfusionMatrix:render: not supported (Torch7 drew it with Qt); tostring(cm) prints the matrix", 2)
end

return CM
