-- man.lua — the manual: the markdown chapters in man/*.md become groff man
-- pages, and the op reference lutorch-ops(7) comes from the op declarations in
-- src/ops/*.lua (the same tables tools/gen.lua builds the bindings from).
--
--   lua5.4 tools/man.lua page man/nn.md OUT.7 [man/*.md ...]   one chapter
--   lua5.4 tools/man.lua ops OUT.7 src/ops/*.lua [-- man/*.md ...]
--   lua5.4 tools/man.lua dtypes        the dtype claims of lutorch-ops(7), "op kind" lines
--
-- The chapter man/tensor.md is lutorch(7), the overview; man/X.md is
-- lutorch-X(7). The further man/*.md arguments only name the other chapters
-- for SEE ALSO. The markdown is the subset the chapters use: # headings,
-- paragraphs, "-" and "1." lists (with indented continuation lines), fenced
-- and indented code blocks, | tables |, and `code`, **bold**, *italic* and
-- [links](other.md) inline. Output renders without warnings under
-- `groff -man -ww` and `man -l`; it needs no preprocessor.

local mode = arg[1]
-- the declaration fields and the backends, as tools/gen.lua reads them
local D = dofile((arg[0]:match("^(.*)[/\\]") or ".") .. "/decl.lua")

------------------------------------------------------------------------------
-- names and dates
------------------------------------------------------------------------------
local function chapter(path) return path:match("([%w_%-]+)%.md$") end
local function page_name(ch) return ch == "tensor" and "lutorch" or "lutorch-" .. ch end

local function version()
  local f = io.open("include/lutorch.h")
  if not f then return "" end
  local v = f:read("a"):match('#define%s+LUTORCH_VERSION%s+"([^"]+)"')
  f:close()
  return v and (" " .. v) or ""
end

-- reproducible builds set SOURCE_DATE_EPOCH
local function date()
  local e = tonumber(os.getenv("SOURCE_DATE_EPOCH") or "")
  return os.date("!%Y-%m-%d", e)
end

------------------------------------------------------------------------------
-- escaping and inline markup
------------------------------------------------------------------------------
-- text that groff must print as is
local NAMED = { [0x2014] = "\\(em", [0x2013] = "\\(en", [0x2192] = "\\(->", [0x2190] = "\\(<-",
  [0x2019] = "\\(cq", [0x2018] = "\\(oq", [0x201C] = "\\(lq", [0x201D] = "\\(rq", [0x00D7] = "\\(mu",
  [0x2264] = "\\(<=", [0x2265] = "\\(>=", [0x2026] = "\\&.\\|.\\|." }
local function esc(s)
  s = s:gsub("\\", "\\e")
  -- groff reads ASCII: other characters as named or \[uXXXX] glyphs
  s = s:gsub(utf8.charpattern, function(c)
    if #c == 1 then return c end
    local cp = utf8.codepoint(c)
    return NAMED[cp] or ("\\[u%04X]"):format(cp)
  end)
  return s
end

-- code: also minus signs as ASCII minus (copy-paste safe), quotes kept plain
local function esc_code(s)
  s = esc(s):gsub("%-", "\\-"):gsub("'", "\\(aq"):gsub("`", "\\(ga"):gsub("%^", "\\(ha"):gsub("~", "\\(ti")
  return s
end

-- a line must not start with a control character
local function guard(line)
  if line:find("^[%.']") then return "\\&" .. line end
  return line
end

local function link(text, url)
  local ch = url:match("^([%w_%-]+)%.md$") or url:match("^([%w_%-]+)%.md#")
  if ch then
    local ref = "\\fB" .. page_name(ch):gsub("%-", "\\-") .. "\\fR(7)"
    if text == url or text:find(page_name(ch), 1, true) then return ref end
    return text .. " (" .. ref .. ")"
  end
  local p, sect = url:match("^([%w_%-]+)%.(%d)$")
  if p then return "\\fB" .. p .. "\\fR(" .. sect .. ")" end
  if text == url then return "\\fI" .. esc_code(url) .. "\\fR" end
  return text .. " <\\fI" .. esc_code(url) .. "\\fR>"
end

-- prose markup outside code spans
local function inline_text(s, upper)
  if upper then s = s:upper() end
  s = esc(s)
  -- page references in bold, unbroken at their hyphens
  s = s:gsub("%f[%w%-]([%w][%w%-]*)%(([1-8])%)", function(p, n)
    if not p:find("^lutorch") then return nil end
    return "\\fB" .. p:gsub("%-", "\\-") .. "\\fR(" .. n .. ")"
  end)
  -- links first: their text may hold emphasis
  s = s:gsub("%[([^%]]+)%]%(([^%)%s]+)%)", link)
  s = s:gsub("%*%*(%S[^*]-%S?)%*%*", "\\fB%1\\fR")
  s = s:gsub("%f[%w%*]%*([^%s*][^*]-)%*%f[^%w%*]", function(x)
    if x:find("%s$") then return nil end
    return "\\fI" .. x .. "\\fR"
  end)
  s = s:gsub("%f[%w_]_([^%s_][^_]-)_%f[^%w_]", function(x)
    if x:find("%s$") then return nil end
    return "\\fI" .. x .. "\\fR"
  end)
  return s
end

local function inline(s, upper)
  local out, pos = {}, 1
  while true do
    local a, b, ticks = s:find("(`+)", pos)
    if not a then out[#out + 1] = inline_text(s:sub(pos), upper); break end
    local c, d = s:find(ticks, b + 1, true)
    if not c then out[#out + 1] = inline_text(s:sub(pos), upper); break end
    out[#out + 1] = inline_text(s:sub(pos, a - 1), upper)
    local code = s:sub(b + 1, c - 1):gsub("^ (.*) $", "%1")
    -- a short span stays on one line
    local c = esc_code(code)
    if #code <= 20 then c = c:gsub(" ", "\\ ") end
    out[#out + 1] = "\\fB" .. c .. "\\fR"
    pos = d + 1
  end
  return table.concat(out)
end

------------------------------------------------------------------------------
-- output
------------------------------------------------------------------------------
local Out = {}
Out.__index = Out
local function new_out() return setmetatable({ lines = {} }, Out) end
function Out:raw(s) self.lines[#self.lines + 1] = s end
-- prose: one output line per source line, each guarded
function Out:text(s)
  local ls = {}
  for line in (s .. "\n"):gmatch("(.-)\n") do
    line = line:gsub("^%s+", ""):gsub("%s+$", "")
    if line ~= "" then ls[#ls + 1] = line end
  end
  -- inline markup may span lines (a `code span` broken over two)
  for line in (inline(table.concat(ls, "\n")) .. "\n"):gmatch("(.-)\n") do self:raw(guard(line)) end
end
function Out:code(lines)
  self:raw(".PP")
  self:raw(".RS 4")
  self:raw(".EX")
  for _, l in ipairs(lines) do
    l = l:gsub("\t", "        "):gsub("%s+$", "")
    self:raw(l == "" and "" or guard(esc_code(l)))
  end
  self:raw(".EE")
  self:raw(".RE")
end
-- Tables become tagged paragraphs: the first column is the tag, the others the
-- body (each after its header when there are more than two). They read well at
-- any width and need no tbl, whose text blocks cannot wrap long code.
function Out:table(rows)
  local ncol = #rows[1]
  local head = rows[1]
  local w = 0
  for r = 2, #rows do w = math.max(w, #(rows[r][1] or ""):gsub("`", "")) end
  local ind = w <= 18 and w + 2 or 4
  local function bold(x) return "\\fB" .. x:gsub("\\fR", "\\fB") .. "\\fR" end
  if ncol <= 2 then
    self:raw(".PP")
    self:raw(guard(bold(inline(head[1] or "")) .. (head[2] and (" \\(em " .. bold(inline(head[2]))) or "")))
  end
  for r = 2, #rows do
    local row = rows[r]
    self:raw(".TP " .. ind)
    self:raw(guard(inline(row[1] or "")))
    for i = 2, ncol do
      if i > 2 then self:raw(".br") end
      local cell = inline(row[i] or "")
      if ncol > 2 then cell = "\\fI" .. inline(head[i] or "") .. "\\fR: " .. cell end
      self:raw(guard(cell))
    end
  end
end
function Out:result(name, title)
  local head = {}
  head[#head + 1] = ('.TH "%s" 7 "%s" "lutorch%s" "lutorch manual"'):format(name:upper(), date(), version())
  -- no hyphenation and ragged right: most words here are identifiers
  head[#head + 1] = ".nr HY 0\n.nh\n.na"
  return table.concat(head, "\n") .. "\n" .. table.concat(self.lines, "\n") .. "\n"
end

------------------------------------------------------------------------------
-- markdown blocks
------------------------------------------------------------------------------
local function split_row(line)
  local cells = {}
  line = line:gsub("^%s*|", ""):gsub("|%s*$", "")
  -- a | inside `code` does not split
  local cur, intick = {}, false
  for c in line:gmatch(".") do
    if c == "`" then intick = not intick end
    if c == "|" and not intick then
      cells[#cells + 1] = table.concat(cur):gsub("^%s+", ""):gsub("%s+$", ""); cur = {}
    else cur[#cur + 1] = c end
  end
  cells[#cells + 1] = table.concat(cur):gsub("^%s+", ""):gsub("%s+$", "")
  return cells
end

local function is_item(line)
  local ind, mark, rest = line:match("^(%s*)([%-%*%+]) (.*)$")
  if not ind then ind, mark, rest = line:match("^(%s*)(%d+%.) (.*)$") end
  return ind, mark, rest
end

-- parse markdown text into blocks: {kind=, ...}
local function blocks_of(text)
  local lines = {}
  for l in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  local blocks, i = {}, 1
  local function blank(l) return l == nil or l:find("^%s*$") end
  while i <= #lines do
    local l = lines[i]
    if blank(l) then i = i + 1
    elseif l:find("^%s*```") then
      local code = {}
      local ind = #l:match("^(%s*)")
      i = i + 1
      while i <= #lines and not lines[i]:find("^%s*```") do
        code[#code + 1] = lines[i]:sub(1, ind):find("^%s*$") and lines[i]:sub(ind + 1) or lines[i]
        i = i + 1
      end
      blocks[#blocks + 1] = { kind = "code", lines = code }
      i = i + 1
    elseif l:find("^#+%s") then
      local h, t = l:match("^(#+)%s+(.-)%s*#*%s*$")
      blocks[#blocks + 1] = { kind = "heading", level = #h, text = t }
      i = i + 1
    elseif l:find("^    ") then
      local code = {}
      while i <= #lines and (lines[i]:find("^    ") or (blank(lines[i]) and lines[i + 1] and lines[i + 1]:find("^    "))) do
        code[#code + 1] = lines[i]:sub(5)
        i = i + 1
      end
      blocks[#blocks + 1] = { kind = "code", lines = code }
    elseif l:find("^%s*|") then
      local rows = {}
      while i <= #lines and lines[i]:find("^%s*|") do
        if not lines[i]:find("^%s*|[%s%-:|]+$") then rows[#rows + 1] = split_row(lines[i]) end
        i = i + 1
      end
      blocks[#blocks + 1] = { kind = "table", rows = rows }
    elseif is_item(l) then
      local items = {}
      local ordered = l:match("^%s*%d+%.") ~= nil
      while i <= #lines do
        local ind, mark, rest = is_item(lines[i])
        if not ind then break end
        local item = { level = #ind, mark = mark, text = { rest }, more = {} }
        i = i + 1
        -- continuation lines, then indented paragraphs/code after blank lines
        while i <= #lines and not blank(lines[i]) and not is_item(lines[i]) and not lines[i]:find("^%s*```") do
          item.text[#item.text + 1] = lines[i]; i = i + 1
        end
        while blank(lines[i]) and lines[i + 1] and lines[i + 1]:find("^  ") and not is_item(lines[i + 1]) do
          i = i + 1
          local sub = {}
          while i <= #lines and not blank(lines[i]) and not is_item(lines[i]) do
            sub[#sub + 1] = lines[i]; i = i + 1
          end
          item.more[#item.more + 1] = sub
        end
        items[#items + 1] = item
        -- a blank line between items keeps the list
        if blank(lines[i]) and lines[i + 1] and is_item(lines[i + 1]) then i = i + 1 end
      end
      blocks[#blocks + 1] = { kind = "list", items = items, ordered = ordered }
    else
      local para = {}
      while i <= #lines and not blank(lines[i]) and not lines[i]:find("^#+%s") and not lines[i]:find("^%s*```")
        and not lines[i]:find("^%s*|") and not (#para > 0 and is_item(lines[i])) do
        para[#para + 1] = lines[i]; i = i + 1
      end
      blocks[#blocks + 1] = { kind = "para", text = table.concat(para, "\n") }
    end
  end
  return blocks
end

local function render_list(out, b)
  local base = b.items[1].level
  local depth = 0
  for n, it in ipairs(b.items) do
    local want = it.level > base and 1 or 0
    while depth < want do out:raw(".RS 2"); depth = depth + 1 end
    while depth > want do out:raw(".RE"); depth = depth - 1 end
    if b.ordered then out:raw(('.IP "%s" 4'):format(it.mark))
    else out:raw(".IP \\(bu 2") end
    out:text(table.concat(it.text, "\n"))
    for _, sub in ipairs(it.more) do
      if sub[1]:find("^%s*```") or sub[1]:find("^      ") then
        local code = {}
        for _, l in ipairs(sub) do if not l:find("^%s*```") then code[#code + 1] = l:gsub("^      ", ""):gsub("^  ", "") end end
        out:code(code)
      else
        out:raw(".IP \"\" 2")
        out:text(table.concat(sub, "\n"))
      end
    end
  end
  while depth > 0 do out:raw(".RE"); depth = depth - 1 end
end

local function render_blocks(out, blocks)
  for _, b in ipairs(blocks) do
    if b.kind == "heading" then
      if b.level <= 2 then out:raw('.SH "' .. inline(b.text, true):gsub('"', "") .. '"')
      else out:raw('.SS "' .. inline(b.text):gsub('"', "") .. '"') end
    elseif b.kind == "para" then
      out:raw(".PP"); out:text(b.text)
    elseif b.kind == "code" then out:code(b.lines)
    elseif b.kind == "table" then out:table(b.rows)
    elseif b.kind == "list" then render_list(out, b) end
  end
end

local function see_also(out, self_name, others)
  local refs = { "\\fBlutorch\\fR(1)", "\\fBlutorch\\fR(3)" }
  local names = { "lutorch", "lutorch-ops" }
  for _, p in ipairs(others) do names[#names + 1] = page_name(chapter(p)) end
  table.sort(names, function(a, b) if a == "lutorch" then return b ~= "lutorch" end
    if b == "lutorch" then return false end return a < b end)
  local seen = { [self_name] = true }
  for _, n in ipairs(names) do
    if not seen[n] then seen[n] = true; refs[#refs + 1] = "\\fB" .. n:gsub("%-", "\\-") .. "\\fR(7)" end
  end
  out:raw('.SH "SEE ALSO"')
  out:raw(table.concat(refs, ", "))
end

local function write(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end

------------------------------------------------------------------------------
-- a chapter
------------------------------------------------------------------------------
local function page(src, dst, others)
  local f = assert(io.open(src))
  local text = f:read("a")
  f:close()
  local ch = chapter(src)
  local name = page_name(ch)
  local blocks = blocks_of(text)
  local out = new_out()
  local title = table.remove(blocks, 1)
  assert(title and title.kind == "heading" and title.level == 1, src .. ": must start with a '# title' line")
  -- "# nn — modules, layers ..." -> NAME: lutorch-nn \- modules, layers ...
  local what = title.text:match("^.-%s+—%s+(.+)$") or title.text
  out:raw(".SH NAME")
  out:raw(name .. " \\- " .. inline(what))
  -- a code block before any prose is the synopsis
  if blocks[1] and blocks[1].kind == "code" then
    out:raw(".SH SYNOPSIS")
    out:code(table.remove(blocks, 1).lines)
  end
  if blocks[1] and not (blocks[1].kind == "heading" and blocks[1].level <= 2) then out:raw(".SH DESCRIPTION") end
  render_blocks(out, blocks)
  local own_see = false
  for _, b in ipairs(blocks) do
    if b.kind == "heading" and b.text:lower():find("^see also") then own_see = true end
  end
  if not own_see then see_also(out, name, others) end
  write(dst, out:result(name))
end

------------------------------------------------------------------------------
-- the op reference
------------------------------------------------------------------------------
local FAMILY = {
  convert = { "CONVERSION", "Changing dtype, copying and filling." },
  creation = { "CREATION", "New tensors. Options: dtype (default torch.get_default_dtype(), int64 where noted), " ..
    "device, requires_grad. Random ops take a generator (torch.Generator) and use the default one otherwise." },
  elementwise = { "ELEMENTWISE", "Arithmetic, math functions, comparisons, logic and activations, applied element by " ..
    "element. Tensor arguments broadcast against each other as in PyTorch, and numbers where a Tensor is expected act " ..
    "as 0-d tensors that promote like Python scalars (an integer tensor plus 0.5 is a float tensor; a float32 tensor " ..
    "times a float64 number stays float32)." },
  index = { "INDEXING", "Selection, gathering and scattering by index. Index tensors hold 1-based int64 indices." },
  linalg = { "LINEAR ALGEBRA", "Matrix products and decompositions (OpenBLAS on the CPU). Inputs of different dtypes " ..
    "promote; bool is not supported." },
  nn_conv = { "CONVOLUTION AND POOLING", "The functional forms behind nn.Conv*, nn.*Pool* and friends; inputs are " ..
    "(N, C, ...) floating tensors." },
  nn_loss = { "LOSSES", "Loss functions behind nn.*Loss; class targets are 1-based int64." },
  nn_misc = { "NEURAL NETWORK FUNCTIONS", "Linear layers, dropout, embeddings, distances, attention, and friends." },
  nn_norm = { "NORMALIZATION", "Softmax and the normalization layers' functional forms." },
  optim = { "OPTIMIZER KERNELS", "Fused parameter updates used by optim (they work in place on their tensors)." },
  reduce = { "REDUCTIONS", "Sums, means, norms, extrema and statistics. dim is 1-based (a number or a table of dims, " ..
    "nil for all); keepdim keeps reduced dims with size 1. Index results (argmax, max with a dim) are 1-based." },
  shape = { "SHAPE AND VIEWS", "Views share storage with their input (writes through a view are seen by the " ..
    "base); reshape views when it can and copies otherwise." },
  sort = { "SORTING AND SELECTION", "Index results are 1-based int64." },
  special = { "SPECIAL FUNCTIONS", "torch.special's own functions (the others are top-level ops under a second " ..
    "name): computed in double for every float dtype and rounded once; integer and bool inputs give the default " ..
    "float dtype. Domains and accuracy: lutorch-special(7)." },
}

-- dtypes for elementwise ops whose kernels narrow or widen them (checked
-- against the kernels by tests/sh/test_man.sh through `man.lua dtypes`); other
-- ops accept every dtype their family intro names, by type promotion.
local DT_NOTE = {
  float_out = "any dtype in; float16/bfloat16/float32/float64 out (integer and bool inputs give the default float dtype)",
  float_only = "floating dtypes only",
  bool_out = "any dtype in; bool out",
  int_bool_only = "integer and bool dtypes only",
  int_only = "integer dtypes only",
  no_bool = "every dtype but bool",
  div = "true division gives a floating result (integer and bool inputs give the default float dtype); " ..
    "with a rounding_mode the dtype follows type promotion",
}
local DT_KIND = { div = "div" }
local function dt(kind, names) for n in names:gmatch("%S+") do DT_KIND[n] = kind end end
dt("float_out", "atan2 hypot sqrt rsqrt reciprocal exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan " ..
  "sinh cosh tanh asinh acosh atanh sigmoid erf erfc erfinv logit xlogy lgamma digamma sinc deg2rad rad2deg " ..
  "logaddexp logaddexp2 true_divide glu igamma igammac")
dt("float_only", "silu frac mish hardsigmoid hardswish softsign logsigmoid tanhshrink selu gelu elu celu " ..
  "softplus hardshrink softshrink leaky_relu rrelu")
dt("bool_out", "eq ne lt le gt ge isnan isinf isfinite isposinf isneginf logical_and logical_or " ..
  "logical_xor logical_not isclose signbit")
dt("int_bool_only", "bitwise_and bitwise_or bitwise_xor bitwise_not")
dt("int_only", "bitwise_left_shift bitwise_right_shift")
dt("no_bool", "neg relu relu6 hardtanh")
local DT = {}
for n, k in pairs(DT_KIND) do DT[n] = DT_NOTE[k] end

local function word_list(t) return table.concat(t, ", ") end

local function lua_call(op, method)
  local pos, kw = {}, {}
  for i, a in ipairs(op.schema.args) do
    if not (method and i == 1) then
      if a.kwonly then
        kw[#kw + 1] = a.name .. "=" .. (a.default or "")
      elseif a.default then pos[#pos + 1] = "[" .. a.name .. "=" .. a.default .. "]"
      else pos[#pos + 1] = a.name end
    end
  end
  if #kw > 0 then pos[#pos + 1] = "{" .. word_list(kw) .. "}" end
  return word_list(pos)
end

-- declarations as gen.lua reads them: schema text, fields; in-place forms
-- the ops with a meta kernel from src/ops/meta.lua's lists (tools/gen_meta.lua), by name
local META = {}
local function load_ops(files)
  local fams, order = {}, {}
  table.sort(files)
  for _, f in ipairs(files) do
    local fam = f:match("([%w_]+)%.lua$")
    order[#order + 1] = fam
    fams[fam] = {}
    local decls = dofile(f)
    for _, names in pairs(decls.meta_rules or {}) do for _, n in ipairs(names) do META[n] = true end end
    for n in pairs(decls.meta_kernels or {}) do META[n] = true end
    for _, d in ipairs(decls) do
      D.check(d)
      local name, args, ret = d[1]:match("^%s*([%w_]+)%s*%((.*)%)%s*%->%s*(.-)%s*$")
      assert(name, "bad schema " .. d[1])
      local sch = { args = {}, ret = ret }
      local kw = false
      local depth, cur, parts = 0, {}, {}
      for c in (args .. ","):gmatch(".") do
        if c == "(" or c == "[" then depth = depth + 1 elseif c == ")" or c == "]" then depth = depth - 1 end
        if c == "," and depth == 0 then parts[#parts + 1] = table.concat(cur):match("^%s*(.-)%s*$"); cur = {}
        else cur[#cur + 1] = c end
      end
      for _, p in ipairs(parts) do
        if p == "*" then kw = true
        elseif p ~= "" then
          local ty, nm, def = p:match("^(%S+)%s+([%w_]+)%s*=?%s*(.*)$")
          ty = ty:gsub("%b()", "")
          if def == "None" then def = "nil" elseif def == "True" then def = "true" elseif def == "False" then def = "false" end
          sch.args[#sch.args + 1] = { type = ty, name = nm, default = def ~= "" and def or nil, kwonly = kw }
        end
      end
      local op = { name = name, text = d[1], decl = d, schema = sch, lua = d.lua or name,
        variants = d.variants or "function,method", alias = d.alias or {}, doc = d.doc or "" }
      table.insert(fams[fam], op)
    end
  end
  return fams, order
end

local function op_entry(out, op, fam)
  local d = op.decl
  local tags = {}
  if op.variants:find("function") then tags[#tags + 1] = ("torch.%s(%s)"):format(op.lua, lua_call(op, false)) end
  if op.variants:find("method") then tags[#tags + 1] = ("x:%s(%s)"):format(op.lua, lua_call(op, true)) end
  out:raw(".TP 4")
  out:raw(guard("\\fB" .. esc_code(tags[1]) .. "\\fR"))
  if tags[2] then out:raw(guard("\\fB" .. esc_code(tags[2]) .. "\\fR")); out:raw(".br") end
  if d.doc and d.doc ~= "" then out:text(d.doc) end
  local facts = {}
  facts[#facts + 1] = "Schema: \\f(CR" .. esc_code(op.text) .. "\\fR."
  local names = {}
  if op.lua ~= op.name then names[#names + 1] = "C name lt_" .. op.name end
  if #op.alias > 0 then names[#names + 1] = "also " .. word_list(op.alias) end
  if d.inplace then
    local ip = { "x:" .. op.lua .. "_" }
    -- a namespaced alias (special.gammaln) is a function alone, with no in-place form
    for _, a in ipairs(op.alias) do
      if not a:find(".", 1, true) then ip[#ip + 1] = "x:" .. a .. "_" end
    end
    names[#names + 1] = "in place " .. word_list(ip) .. " (torch." .. op.name .. "_)"
  end
  if d.out then names[#names + 1] = "accepts {out=t}" end
  if #names > 0 then facts[#facts + 1] = esc_code(table.concat(names, "; ")):gsub("^.", string.upper) .. "." end
  if DT[op.name] then facts[#facts + 1] = "Dtypes: " .. DT[op.name] .. "." end
  local ntensor = 0
  for _, a in ipairs(op.schema.args) do if a.type == "Tensor" or a.type == "Tensor?" then ntensor = ntensor + 1 end end
  if fam == "elementwise" and ntensor > 1 then facts[#facts + 1] = "Broadcasts its tensor arguments." end
  if op.view or d.view or op.schema.ret:match("^Tensor%(a%)") then facts[#facts + 1] = "Returns a view of self." end
  if d.nondiff then facts[#facts + 1] = "Not differentiable."
  elseif d.derivatives then
    local ins = {}
    for _, a in ipairs(op.schema.args) do if d.derivatives[a.name] then ins[#ins + 1] = a.name end end
    facts[#facts + 1] = "Differentiable" .. (#ins > 0 and (" in " .. word_list(ins)) or "") .. "."
  elseif d.composite then facts[#facts + 1] = "Differentiable (written with differentiable ops)."
  else facts[#facts + 1] = "Differentiable." end
  -- per backend: ✓ a kernel (a device-neutral one counts for all), — none yet
  if d.composite then facts[#facts + 1] = "Kernels: composite."
  else
    local ks = {}
    for _, b in ipairs(D.BACKENDS) do
      ks[#ks + 1] = b .. " " .. ((D.status(d, b) or (b == "meta" and META[op.name])) and "✓" or "—")
    end
    facts[#facts + 1] = esc("Kernels: " .. word_list(ks) .. ".")
  end
  out:raw(".br")
  out:raw(guard(table.concat(facts, " ")))
end

local function ops_page(dst, files, others)
  local fams, order = load_ops(files)
  local out = new_out()
  -- the check mark of the Kernels lines, on a terminal without it
  out:raw(".fchar \\[u2713] yes")
  out:raw(".SH NAME")
  out:raw("lutorch-ops \\- every tensor op: signatures, dtypes, broadcasting, autograd")
  out:raw(".SH SYNOPSIS")
  out:code({ "y = torch.add(x, other, {alpha = 2})   -- a function: torch.NAME",
    "y = x:add(other, {alpha = 2})          -- the same op as a method",
    "x:add_(other)                          -- in place (trailing _), returns x",
    "torch.add(x, other, {out = y})         -- into an existing tensor",
    "torch.help(\"add\")   -- or ? add in the REPL: this entry" })
  out:raw(".SH DESCRIPTION")
  out:text([[
Generated from the op declarations in src/ops/ (the same tables the bindings and the
autograd nodes are generated from). Each entry gives the Lua call forms, a line of
description, the schema, other Lua names (Torch7 spellings), the in-place form, dtypes
where the op narrows or widens them, broadcasting, whether the op is differentiable, and
its kernels: ✓ for each backend (cpu, cuda, meta) that has one, — where none is written yet;
a composite op is written with other ops and runs wherever they do.]])
  out:raw(".SS Reading a schema")
  out:raw(".IP \\(bu 2")
  out:text([[
Positional arguments fill the schema in order; arguments after `*` are keyword-only and come
from a trailing options table: `torch.sum(x, {dim = 1, keepdim = true})`. Optional
positional arguments are shown in brackets with their defaults.]])
  out:raw(".IP \\(bu 2")
  out:text([[
`Tensor` takes a tensor or a number (wrapped as a 0-d tensor), `Tensor[]` a table of tensors,
`Scalar` a number or boolean, `int[]` numbers as varargs or a table (`x:view(2, 3)`,
`x:view{2, 3}`), `ScalarType` `torch.float32` or `"float32"`, `Device` `"cpu"` or `"cuda:0"`.]])
  out:raw(".IP \\(bu 2")
  out:text([[
`Dim` and `Index` are **1-based**; negative values count from the end (`-1` is the last);
`0` is an error. Ops that return indices (argmax, sort, topk, nonzero, max with a dim) return
1-based int64 indices.]])
  out:raw(".IP \\(bu 2")
  out:text([[
`Tensor(a)` in the result means a view of the argument marked `(a)`; `Tensor(a!)` an argument
written in place. The in-place form `x:NAME_` of an op writes into x and returns it.]])
  out:raw(".IP \\(bu 2")
  out:text([[
Type promotion follows PyTorch: the result dtype is the widest category among the tensor
arguments (bool < integer < floating), numbers only raise the category. The default float
dtype is float32 (`torch.set_default_dtype`).]])
  for _, fam in ipairs(order) do
    local t = FAMILY[fam] or { fam:upper():gsub("_", " "), "" }
    out:raw('.SH "' .. t[1] .. '"')
    if t[2] ~= "" then out:text(t[2]) end
    for _, op in ipairs(fams[fam]) do op_entry(out, op, fam) end
  end
  see_also(out, "lutorch-ops", others)
  write(dst, out:result("lutorch-ops"))
end

------------------------------------------------------------------------------
if mode == "page" then
  local others = {}
  for i = 4, #arg do others[#others + 1] = arg[i] end
  page(arg[2], arg[3], others)
elseif mode == "ops" then
  local files, others, rest = {}, {}, false
  for i = 3, #arg do
    if arg[i] == "--" then rest = true
    elseif rest then others[#others + 1] = arg[i]
    else files[#files + 1] = arg[i] end
  end
  ops_page(arg[2], files, others)
elseif mode == "dtypes" then
  -- the dtype claims, for the test that checks them against the kernels
  local names = {}
  for n in pairs(DT_KIND) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do print(n .. " " .. DT_KIND[n]) end
else
  io.stderr:write("usage: lua5.4 tools/man.lua page CHAPTER.md OUT.7 [md...] | ops OUT.7 decl.lua... [-- md...]\n")
  os.exit(2)
end
