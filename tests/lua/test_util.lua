-- test_util.lua — torch.time, torch.Timer and the lazily loaded libraries.
local T = require "testing"

T.test("torch.time is a monotonic wall clock", function()
  local a = torch.time()
  local b = torch.time()
  T.ok(type(a) == "number" and b >= a)
end)

T.test("torch.Timer measures, stops, resumes and resets", function()
  local t = torch.Timer()
  local x = 0
  for i = 1, 200000 do x = x + i end
  local r = t:time()
  T.ok(r.real > 0 and r.user >= 0 and r.sys == 0)
  t:stop()
  local s1 = t:time().real
  for i = 1, 200000 do x = x + i end
  T.eq(t:time().real, s1)
  t:resume()
  for i = 1, 200000 do x = x + i end
  T.ok(t:time().real > s1)
  T.ok(t:reset():time().real < s1 + 1)
  T.ok(tostring(t):match("^torch%.Timer%("))
end)

T.test("torch.nn, torch.optim and torch.utils.data are the required libraries", function()
  T.ok(rawequal(torch.nn, require "nn"))
  T.ok(rawequal(torch.optim, require "optim"))
  T.ok(rawequal(torch.utils.data, require "data"))
  T.eq(torch.no_such_field, nil)
end)

T.test("torch.help reaches the libraries' man pages", function()
  local nn, optim = require "nn", require "optim"
  T.ok(torch.help(nn.LSTM):find("output, h_n", 1, true))
  T.ok(torch.help("optim.AdamW"):find("amsgrad", 1, true))
  T.ok(torch.help(nn.functional.conv2d):find("F.conv2d", 1, true))
  T.ok(torch.help("data.DataLoader"):find("num_workers", 1, true))
  T.ok(torch.help("nn.NoSuchThing"):find("no reference", 1, true))
  T.ok(torch.help(torch.add):find("^add%("))
end)

T.done()
