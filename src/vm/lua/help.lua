-- help.lua — torch.help(name or value): the reference text `? name` prints in
-- the REPL, from the same sources as the manual: the op table generated from
-- src/ops (ops, their aliases and in-place forms), and the chapters man/*.md
-- (the torch functions that are not ops, tensor methods and fields, autograd,
-- the libraries nn / optim / data, serialization, interchange, distributed).
local torch = ...

local USAGE = [[
torch.help(what) gives the reference for
  an op or function:   torch.help("add"), torch.help(torch.matmul), torch.help("torch.manual_seed")
  a tensor method:     torch.help("x:item"), torch.help("add_")
  a library name:      torch.help("nn.Linear"), torch.help(nn.Linear), torch.help("optim.AdamW")
  a value:             torch.help(model), torch.help(x)
In the REPL, `? name` prints the same. The full manual: man lutorch (man -l build/man/lutorch.7
in the source tree), with the op reference in lutorch-ops(7).]]

------------------------------------------------------------------------------
-- the op table
------------------------------------------------------------------------------
local by_name
local function index()
  if by_name then return by_name end
  by_name = {}
  for _, op in ipairs(torch._ops()) do
    local list = by_name[op.name] or {}
    list[#list + 1] = op
    by_name[op.name] = list
  end
  return by_name
end

local function op_help(name)
  local entries = index()[name]
  if not entries then return nil end
  local lines = {}
  for _, e in ipairs(entries) do
    lines[#lines + 1] = ("%s\n    %s%s"):format(e.signature, e.doc,
      e.differentiable and "" or " (not differentiable)")
  end
  return table.concat(lines, "\n")
end

------------------------------------------------------------------------------
-- the chapters: man/NAME.md beside lib/ in the source tree, or installed
------------------------------------------------------------------------------
local man_root = false   -- false: not looked for yet; nil: not found
local function find_man()
  if man_root ~= false then return man_root end
  man_root = nil
  local cands = {}
  local path = package.searchpath("nn", package.path)
  if path then
    -- .../lib/nn/init.lua or lib/nn.lua (a relative search path): the folder holding lib/
    local root = path:match("^(.*/)lib/") or (path:match("^lib/") and "./")
    if root then cands[#cands + 1] = root .. "man/" end
    -- installed: PREFIX/share/lua/5.4/nn/init.lua -> PREFIX/share/lutorch/man/
    local prefix = path:match("^(.*/)share/lua/5%.%d/")
    if prefix then cands[#cands + 1] = prefix .. "share/lutorch/man/" end
  end
  cands[#cands + 1] = "man/"
  for _, d in ipairs(cands) do
    local f = io.open(d .. "tensor.md") or io.open(d .. "nn.md")
    if f then f:close(); man_root = d; return d end
  end
  return nil
end

-- every chapter present, in a stable order (the overview first)
local CHAPTERS = { "tensor", "complex", "fft", "autograd", "nn", "optim", "amp", "data", "serialization", "interchange",
  "distributed", "cuda", "profiler", "meta", "pytorch", "torch7", "library", "extension",
  "quantization", "compile", "image", "notebook", "gnuplot" }

local block_cache = {}
-- "MaxPool1d/2d" and "BatchNorm1d/2d/3d" name MaxPool2d and BatchNorm3d too
local function expand_dims(text)
  return (text:gsub("(%a+)(%d)d(/[/%dd]+)", function(base, d, rest)
    local names = { base .. d .. "d" }
    for e in rest:gmatch("/(%d+)d") do names[#names + 1] = base .. e .. "d" end
    return table.concat(names, "/")
  end))
end

-- blocks of one chapter: paragraphs, list items, table rows, fenced code
-- blocks and headings, each with its kind
local function blocks_of(ch)
  if block_cache[ch] ~= nil then return block_cache[ch] end
  local root = find_man()
  local f = root and io.open(root .. ch .. ".md")
  if not f then block_cache[ch] = false; return false end
  local text = f:read("a")
  f:close()
  local blocks, cur, kind, fenced = {}, {}, "para", false
  local function flush()
    if #cur > 0 then
      local t = table.concat(cur, "\n")
      blocks[#blocks + 1] = { text = t, match = expand_dims(t), chapter = ch, kind = kind }
      cur = {}
    end
    kind = "para"
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:find("^%s*```") then
      if fenced then cur[#cur + 1] = line; kind = "code"; flush() else flush(); cur[1] = line end
      fenced = not fenced
    elseif fenced then cur[#cur + 1] = line
    elseif line:find("^%s*$") then flush()
    elseif line:find("^|") then
      flush()
      if not line:find("^|[%s%-:|]+$") then cur[1] = line; kind = "row"; flush() end
    elseif line:find("^#") then flush(); cur[1] = line; kind = "heading"; flush()
    elseif line:find("^    ") and #cur == 0 then cur[1] = line; kind = "code"
    elseif line:find("^%s*[%-%*] ") or line:find("^%d+%. ") then flush(); cur[1] = line
    else cur[#cur + 1] = line end
  end
  flush()
  block_cache[ch] = blocks
  return blocks
end

local function code_spans(text)
  local spans = {}
  for c in text:gmatch("`([^`]+)`") do spans[#spans + 1] = c end
  return spans
end

local function word_pat(item) return "%f[%w_]" .. item:gsub("%p", "%%%0") .. "%f[^%w_]" end

-- blocks of the chapters that name item: definitions (a list item or table
-- row that starts with it) first, then blocks naming it in code; `loose` also
-- takes plain-text mentions and keeps every hit (the libraries' pages name
-- their classes in prose and tables)
local function doc_search(item, chapters, loose)
  local pat = word_pat(item)
  local defs, uses = {}, {}
  for _, ch in ipairs(chapters) do
    local blocks = blocks_of(ch) or {}
    for i, b in ipairs(blocks) do
      if loose then
        if b.match:find(pat) then
          -- a heading stands for its section: show the heading and what follows
          if b.kind == "heading" and blocks[i + 1] then
            uses[#uses + 1] = { text = b.text .. "\n\n" .. blocks[i + 1].text, chapter = ch }
          else
            uses[#uses + 1] = b
          end
        end
      elseif b.kind == "para" or b.kind == "row" then
        local first = b.match:match("^%s*[%-%*] `([^`]+)`") or b.match:match("^|%s*`([^`]+)`")
          or b.match:match("^|%s*([^|]-)%s*|")
        if first and first:find(pat) then defs[#defs + 1] = b
        else
          for _, sp in ipairs(code_spans(b.match)) do
            if sp:find(pat) then uses[#uses + 1] = b; break end
          end
        end
      end
    end
  end
  local hits = #defs > 0 and defs or uses
  if #hits == 0 then return nil end
  if loose then
    -- prose, lists and tables that name the item before code examples that merely use it
    local text, code = {}, {}
    for _, b in ipairs(hits) do
      if b.kind == "code" then code[#code + 1] = b else text[#text + 1] = b end
    end
    for _, b in ipairs(code) do text[#text + 1] = b end
    hits = text
  end
  local max = loose and 8 or 4
  local out, seen = {}, {}
  for i = 1, math.min(#hits, max) do
    local b = hits[i]
    out[#out + 1] = b.text
    seen[b.chapter] = true
  end
  local pages = {}
  for _, ch in ipairs(CHAPTERS) do
    if seen[ch] then pages[#pages + 1] = (ch == "tensor" and "lutorch" or "lutorch-" .. ch) .. "(7)" end
  end
  if #hits > max then out[#out + 1] = ("(%d more places)"):format(#hits - max) end
  out[#out + 1] = "See " .. table.concat(pages, ", ") .. "."
  return table.concat(out, "\n\n")
end

local function all_chapters()
  local list = {}
  for _, ch in ipairs(CHAPTERS) do if blocks_of(ch) then list[#list + 1] = ch end end
  return list
end

------------------------------------------------------------------------------
-- values to names
------------------------------------------------------------------------------
local LIBS = { "nn", "optim", "data", "distributed", "image" }

-- a value with several names (manual_seed and Torch7's manualSeed): the
-- PyTorch spelling first, the way the manual names it
local function rank(k) return (k:find("_") and 0 or 2) + (k:find("%u") and 1 or 0) end
local function best_key(t, v)
  local best
  for k, x in pairs(t) do
    if rawequal(x, v) and type(k) == "string" and (not best or rank(k) < rank(best)
      or (rank(k) == rank(best) and k < best)) then best = k end
  end
  return best
end

local function name_of(v)
  local k = best_key(torch, v)
  if k then return "torch." .. k end
  k = best_key(torch._methods, v)
  if k then return "x:" .. k end
end

-- the libraries whose functions help(value) names (gnuplot's are looked up by
-- name in its chapter, not as a library of classes)
local VALUE_LIBS = { "nn", "optim", "data", "distributed", "gnuplot" }
local function lib_of(v)
  for _, lib in ipairs(VALUE_LIBS) do
    local t = package.loaded[lib]
    if type(t) == "table" then
      for k, x in pairs(t) do if rawequal(x, v) then return lib .. "." .. k end end
      -- nn.functional, distributed.checkpoint (rawget: a lazy field not yet loaded has nothing to find)
      for _, sub in ipairs({ "functional", "checkpoint" }) do
        local st = rawget(t, sub)
        if type(st) == "table" then
          for k, x in pairs(st) do if rawequal(x, v) then return lib .. "." .. sub .. "." .. k end end
        end
      end
    end
  end
end

-- torch.autograd.grad and friends: one level into torch's tables
local function sub_of(v)
  for k, t in pairs(torch) do
    if type(t) == "table" and type(k) == "string" and not k:find("^_") then
      for j, x in pairs(t) do
        if rawequal(x, v) and type(j) == "string" then return "torch." .. k .. "." .. j end
      end
    end
  end
end

local function describe_tensor(x)
  local shape = {}
  for i, s in ipairs(x.shape) do shape[i] = tostring(s) end
  return ("a tensor: %s [%s] on %s%s. Methods: ? x:NAME (torch.help(\"x:item\")); fields x.shape, x.dtype,\n" ..
    "x.device, x.requires_grad, x.grad, x.grad_fn, x.T. The overview: lutorch(7); every op: lutorch-ops(7).")
    :format(x.dtype.name, table.concat(shape, ", "), tostring(x.device), x.requires_grad and ", requires grad" or "")
end

------------------------------------------------------------------------------
-- lookups
------------------------------------------------------------------------------
local function no_help(what)
  return ("help: no help for '%s' (no reference in the manual; torch.help() says how to look)"):format(what)
end

local function lib_doc(lib, item, functional)
  if not blocks_of(lib) then
    return ("help: no reference for '%s.%s' (man/%s.md not found)"):format(lib, item, lib)
  end
  local r = doc_search(item, { lib }, true)
  if r then return r end
  -- nn.utils.rnn.pad_sequence: the page names the function by its last part
  local last = item:match("%.([%w_]+)$")
  r = last and doc_search(last, { lib }, true)
  if r then return r end
  -- classes documented in another chapter (nn.DistributedDataParallel in distributed)
  r = doc_search(lib .. "." .. item, all_chapters()) or doc_search(item, all_chapters(), true)
  if r then return r end
  -- nn.functional.X not named on the page: the op it runs, when it is one
  if functional and op_help(item) then
    return ("nn.functional.%s — the functional form (lutorch-nn(7)) of the op:\n%s"):format(item, op_help(item))
  end
  return no_help(lib .. "." .. item)
end

-- the call form a library function or class declares (torch_class.signature), e.g.
-- "F.conv2d(input, weight, bias=nil, stride=1, padding=0, dilation=1, groups=1)"; the
-- library is loaded first, since its signatures are declared as it loads
local function call_form(lib, item, functional)
  if not pcall(require, lib) then return nil end
  local ok, class = pcall(require, "torch_class")
  if not ok or type(class) ~= "table" or not class.call_form then return nil end
  local form = class.call_form((functional and "F" or lib) .. "." .. item)
  if form and functional then form = form .. "   (nn.functional." .. item .. ")" end
  return form
end

local function lib_help(lib, item, functional)
  local form = call_form(lib, item, functional)
  local r = lib_doc(lib, item, functional)
  if not form then return r end
  -- an F function that runs one op: the op's own entry says what each argument is
  if functional and op_help(item) and not r:find("the functional form", 1, true) then
    form = form .. "\n\nThe op it runs:\n" .. op_help(item)
  end
  if r:find("^help: no ") then return form end
  return form .. "\n\n" .. r
end


-- PyTorch's module paths name the same things: torch.nn.functional.X is F.X, torch.nn.X
-- is nn.X, torch.optim.X is optim.X, torch.utils.data.X is data.X (and torchvision's
-- io, utils and transforms.functional are image)
local PYTORCH_PATHS = {
  { "^torch%.nn%.functional%.", "F." }, { "^nn%.functional%.", "F." }, { "^torch%.nn%.", "nn." },
  { "^torch%.optim%.", "optim." }, { "^torch%.utils%.data%.", "data." },
  -- torchvision's: torchvision.io.read_image is image.read_image, and so on
  { "^torchvision%.io%.", "image." }, { "^torchvision%.utils%.", "image." },
  { "^torchvision%.transforms%.functional%.", "image." }, { "^torch%.image%.", "image." },
}

local function lookup(name)
  for _, p in ipairs(PYTORCH_PATHS) do
    local n, k = name:gsub(p[1], p[2])
    if k > 0 then name = n; break end
  end
  local lib, item = name:match("^(%a+)%.(.+)$")
  -- Torch7 mode's nn (lib/t7nn) is documented with the mode, in lutorch-torch7(7)
  if lib == "nn" and torch.compat() == "torch7" then
    local r = doc_search("nn." .. item, { "torch7" })
    if r then return r end
  end
  for _, l in ipairs(LIBS) do
    if lib == l then
      local fn = item:match("^functional%.(.+)$") or item:match("^F%.(.+)$")
      return lib_help(l, fn or item, fn ~= nil)
    end
  end
  if lib == "F" then return lib_help("nn", item, true) end
  -- torch.X, x:X, Tensor:X, x.X, :X -> X (a qualified name torch.a.b keeps a.b)
  local bare = name:gsub("^torch%.", ""):gsub("^[%a_]*:", ""):gsub("^x%.", ""):gsub("%(%)$", "")
  if bare == "" then return no_help(name) end
  local r = op_help(bare)
  if r then return r end
  local chapters = all_chapters()
  -- a function named in code: torch.NAME / x:NAME forms before the bare word
  r = doc_search("torch." .. bare, chapters) or doc_search("x:" .. bare, chapters) or doc_search(bare, chapters)
  if r then return r end
  -- a.b with a chapter of its own (distributed.all_reduce): b in that chapter
  local sect, rest = bare:match("^([%w_]+)%.(.+)$")
  if sect then
    if blocks_of(sect) then r = doc_search(rest, { sect }) end
    if not r then r = doc_search(rest, chapters) end
    if r then return r end
  end
  return no_help(name)
end

function torch.help(what)
  if what == nil then return USAGE end
  local name = what
  if type(what) == "function" then
    name = name_of(what) or lib_of(what) or sub_of(what)
  elseif torch.is_tensor(what) then
    return describe_tensor(what)
  elseif type(what) == "table" then
    local mt = getmetatable(what)
    name = name_of(what) or lib_of(what) or sub_of(what) or (mt and lib_of(mt))
    -- an object of a torch.class class (Torch7 mode): its class's name
    if not name and torch.typename then name = torch.typename(what) end
  end
  if type(name) ~= "string" then
    return no_help(tostring(what)) .. "\n" .. USAGE
  end
  return lookup(name)
end
