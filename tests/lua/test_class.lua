-- torch_class: the class helper of nn, optim and data (lib/torch_class.lua): subclasses,
-- sub-subclasses, overrides calling the parent, metamethods, __new/__define, type names,
-- isinstance, the Torch7 call form, and the library classes made with it.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local class = require "torch_class"
local nn = require "nn"
local optim = require "optim"
local data = require "data"

-- a small hierarchy of plain classes
local Shape = class("testlib.Shape")
function Shape:__init(name) self.name = name end
function Shape:area() return 0 end
function Shape:describe() return ("%s of area %g"):format(self.name, self:area()) end
Shape.__tostring = function(self) return "<" .. self:describe() .. ">" end
Shape.__eq = function(a, b) return a:area() == b:area() end

local Rect = Shape:extend("Rect")
function Rect:__init(w, h) Shape.__init(self, "rect"); self.w, self.h = w, h end
function Rect:area() return self.w * self.h end

local Square = Rect:extend("Square")
function Square:__init(s) Rect.__init(self, s, s); self.name = "square" end
-- an override that calls the parent's method
function Square:describe() return Rect.describe(self) .. " (a square)" end

T.test("a class, a subclass and a sub-subclass: construction, methods, super", function()
  local s, r, q = Shape("blob"), Rect(2, 3), Square(4)
  T.eq(s:area(), 0)
  T.eq(r:area(), 6)
  T.eq(q:area(), 16)                              -- inherited from Rect
  T.eq(q:describe(), "square of area 16 (a square)")   -- the override reaches the parent's
  T.eq(r:describe(), "rect of area 6")
  T.ok(Rect.super == Shape and Square.super == Rect and Shape.super == nil)
  T.eq(Square.__name, "Square")
  T.eq(Square.__typename, "testlib.Square")
  T.ok(rawget(q, "w") == 4 and getmetatable(q) == Square)
  -- a class without __init constructs too
  local Empty = class("testlib.Empty")
  T.eq(class.type(Empty()), "testlib.Empty")
end)

T.test("metamethods are inherited: __tostring, __eq; a subclass may override them", function()
  T.eq(tostring(Square(2)), "<square of area 4 (a square)>")
  T.ok(Rect(2, 2) == Square(2))                     -- Shape's __eq, copied into both
  local Loud = Rect:extend("Loud")
  Loud.__tostring = function(self) return "LOUD " .. self:area() end
  T.eq(tostring(Loud(1, 5)), "LOUD 5")
  T.eq(tostring(Rect(1, 5)), "<rect of area 5>")   -- the parent keeps its own
  -- __call on a class makes its instances callable, and subclasses inherit it
  local Adder = class("testlib.Adder")
  function Adder:__init(k) self.k = k end
  Adder.__call = function(self, x) return x + self.k end
  local Adder2 = Adder:extend("Adder2")
  T.eq(Adder(1)(41), 42)
  T.eq(Adder2(2)(40), 42)
end)

T.test("type names, isinstance, tostring of classes", function()
  local q = Square(3)
  T.eq(class.type(q), "testlib.Square")
  T.eq(class.typename(q), "testlib.Square")
  T.eq(class.type(3), "number")
  T.eq(class.type({}), "table")
  T.eq(class.typename({}), nil)
  T.eq(class.type(torch.zeros(2)), "torch.FloatTensor")
  T.eq(class.type(torch.zeros(2, { dtype = torch.float64 })), "torch.DoubleTensor")
  T.ok(class.isinstance(q, Square) and class.isinstance(q, Rect) and class.isinstance(q, Shape))
  T.ok(not class.isinstance(Rect(1, 1), Square) and not class.isinstance(5, Shape))
  T.eq(tostring(Square), "testlib.Square")
  T.ok(class.find("testlib.Rect") == Rect)
  T.ok(class.namespace("testlib").Square == Square)
  T.ok(class.is_class(Square) and not class.is_class({}))
end)

T.test("Torch7's form: class(name, parent name) returns the class and its parent", function()
  local Circle, parent = class("testlib.Circle", "testlib.Shape")
  T.ok(parent == Shape and Circle.super == Shape)
  function Circle:__init(r) parent.__init(self, "circle"); self.r = r end
  function Circle:area() return math.pi * self.r ^ 2 end
  T.near(Circle(1):area(), math.pi)
  T.eq(class.type(Circle(1)), "testlib.Circle")
  -- extend with a body of fields; a dotted name is a full name
  local Tri = Shape:extend("otherlib.Tri", { area = function() return 1.5 end })
  T.eq(Tri("t"):area(), 1.5)
  T.eq(class.type(Tri("t")), "otherlib.Tri")
  T.raises(function() class("testlib.X", "testlib.NoSuchParent") end, "unknown parent class 'testlib.NoSuchParent'")
  T.raises(function() class(42) end, "torch_class", "name")
  T.raises(function() Shape.extend(Square(1), "Bad") end, "extend", "call it on a class")
  T.raises(function() Shape:extend(7) end, "testlib.Shape.extend", "class name")
end)

T.test("__new gives the raw instance; __define sees assignments to the class and subclasses", function()
  local Counted = class("testlib.Counted")
  local made = 0
  function Counted.__new(cls, ...) made = made + 1; return { serial = made, nargs = select("#", ...) } end
  local defined = {}
  function Counted.__define(cls, k, v)
    defined[#defined + 1] = cls.__name .. "." .. k
    rawset(cls, k, v)
  end
  function Counted:__init(a) self.a = a end
  local Sub = Counted:extend("Sub")
  function Sub:get() return self.a end
  local x, y = Counted(1, 2), Sub(7)
  T.eq({ x.serial, x.nargs, x.a, y.serial, y:get() }, { 1, 2, 1, 2, 7 })
  T.eq(defined, { "Counted.__init", "Sub.get" })
end)

T.test("nn.Module: user subclass, sub-subclass, parent forward, __call, type names", function()
  local Net = nn.Module:extend("ClassTestNet")
  function Net:__init(n) self.fc = nn.Linear(n, 2) end
  function Net:forward(x) return self.fc(x) end
  local Scaled = Net:extend("ClassTestScaled")
  function Scaled:__init(n, k) Net.__init(self, n); self.k = k end
  function Scaled:forward(x) return Net.forward(self, x) * self.k end   -- the parent's forward
  local Twice = Scaled:extend("ClassTestTwice")
  function Twice:forward(x) return Scaled.forward(self, x) * 2 end
  local m = Twice(3, 10)
  local x = torch.randn(4, 3)
  T.tensor(m(x), (m.fc(x) * 20):totable(), { tol = 1e-5 })      -- __call runs the most derived forward
  T.tensor(m:forward(x), (m.fc(x) * 20):totable(), { tol = 1e-5 })
  T.eq(class.type(m), "nn.ClassTestTwice")
  T.eq(tostring(Twice), "nn.ClassTestTwice")
  T.ok(nn.isinstance(m, Net) and nn.isinstance(m, nn.Module) and m:is_a(Scaled))
  T.ok(nn.classes.ClassTestTwice == Twice)
  T.eq(m:_get_name(), "ClassTestTwice")
  T.eq(#m:parameters(), 2)
  T.eq(class.type(nn.Linear(2, 2)), "nn.Linear")
  T.eq(class.type(nn.Sequential()), "nn.Sequential")
end)

T.test("a Module class of another namespace (Torch7's torch.class form) saves and loads", function()
  local Net = class("mylib.ClassTestNet", "nn.Module")
  function Net:__init() self.fc = nn.Linear(2, 1) end
  function Net:forward(x) return self.fc(x) end
  local m = Net()
  local S = T.scratch()
  torch.save(S.path("net.lt"), m)
  local r = torch.load(S.path("net.lt"))
  S.remove()
  T.ok(getmetatable(r) == Net)
  T.tensor(r.fc.weight, m.fc.weight:totable())
  T.eq(class.type(r), "mylib.ClassTestNet")
end)

T.test("optim, schedulers and data classes are the helper's classes", function()
  local p = torch.zeros(2, { requires_grad = true })
  local sgd = optim.SGD({ p }, { lr = 0.1 })
  T.eq(class.type(sgd), "optim.SGD")
  T.ok(class.isinstance(sgd, optim.Optimizer) and optim.classes.SGD == optim.SGD)
  local My = optim.SGD:extend("ClassTestSGD")
  T.eq(class.type(My({ p }, { lr = 0.5 })), "optim.ClassTestSGD")
  T.ok(optim.classes.ClassTestSGD == My)
  local sched = optim.lr_scheduler.StepLR(sgd, 2)
  T.eq(class.type(sched), "optim.lr_scheduler.StepLR")
  T.ok(class.isinstance(sched, optim.lr_scheduler.LRScheduler))
  local ds = data.TensorDataset(torch.arange(1, 6))
  T.eq(class.type(ds), "data.TensorDataset")
  T.eq(tostring(ds), "TensorDataset(5)")
  T.eq(#ds, 5)
  T.eq(ds[2][1]:item(), 2)                       -- ds[i] is ds:get(i)
  local loader = data.DataLoader(ds, { batch_size = 2 })
  T.eq(class.type(loader), "data.DataLoader")
  T.eq(#loader, 3)
  T.eq(class.type(data.RandomSampler(ds)), "data.RandomSampler")
  T.ok(class.isinstance(data.RandomSampler(ds), data.Sampler))
  T.eq(class.type(data.transforms.ToFloat()), "data.transforms.ToFloat")
  -- a user dataset: a subclass of Dataset keeps #ds, ds[i] and the tostring
  local Squares = data.Dataset:extend("ClassTestSquares")
  function Squares:len() return 3 end
  function Squares:get(i) return i * i end
  local sq = Squares()
  T.eq({ #sq, sq[3], tostring(sq) }, { 3, 9, "ClassTestSquares(3)" })
end)

T.done()
