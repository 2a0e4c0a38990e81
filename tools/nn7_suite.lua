-- nn7_suite.lua — runs one test of Torch7's nn test.lua in Torch7 mode (tools/nn7_suite.sh)
--   lutorch --torch7 tools/nn7_suite.lua NN_TREE/test.lua NAME [SEED]
local file, name, seed = arg[1], arg[2], tonumber(arg[3] or "123")
require "nn"
dofile(file)
-- Torch7's Tester:run takes patterns: anchor the name ("Module_getParameters_1" is not _10)
local t = nn.test({ "^" .. name .. "$" }, seed)
os.exit(t.nrun == 1 and t.nfailed == 0 and 0 or 1)
