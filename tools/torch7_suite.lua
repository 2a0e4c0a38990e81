-- torch7_suite.lua — runs one test of Torch7's test/test.lua (tools/torch7_suite.sh)
--   lutorch [--torch7] tools/torch7_suite.lua TORCH7_TREE/test/test.lua NAME LUTORCH_TREE
-- Only the test infrastructure is supplied: torch.Tester and torch.TestSuite,
-- lutorch's own (src/vm/lua/t7tester.lua) where the build does not have them.
local file, name, tree = arg[1], arg[2], arg[3]
if not torch.Tester then
  local f = assert(loadfile(tree .. "/src/vm/lua/t7tester.lua"))
  f(torch)
  torch._t7_tester(torch)
end
dofile(file)
-- Torch7's Tester:run takes patterns: anchor the name so that "add" is not also "addbmm"
local t = torch.test({ "^" .. name .. "$" })
os.exit(t.nrun == 1 and t.nfailed == 0 and 0 or 1)
