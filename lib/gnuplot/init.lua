-- gnuplot — Torch7's plotting package: plots drawn by the gnuplot program.
--
--   local gnuplot = require "gnuplot"
--   gnuplot.plot({'sin', x, torch.sin(x), '-'}, {'cos', x, torch.cos(x), '-'})
--   gnuplot.title('waves'); gnuplot.xlabel('x')
--
-- Each figure keeps its settings (title, labels, grid, legend, axes, raw
-- commands) and its last plot; drawing runs gnuplot on the whole script, so a
-- change after the plot (a title) draws the figure again. Where a figure goes:
--   - in a notebook (the Jupyter kernel sets torch._display_hook): a PNG (or
--     SVG, gnuplot.setterm('svg')) shown below the cell when the cell ends, or
--     at once with gnuplot.plotflush();
--   - in a terminal session with a display ($DISPLAY) and a window terminal
--     (qt, wxt, x11): a window, as Torch7 had;
--   - else a file, gnuplot_figureN.png in the current directory (said once);
--   - gnuplot.pngfigure(path) / svgfigure(path): that file, always.
-- The chapter: man/gnuplot.md (lutorch-gnuplot(7)).
local torch = require "torch"

local gnuplot = {}

local WIDTH, HEIGHT = 640, 480
local WINDOW_TERMS = { "qt", "wxt", "x11" }

local state = {
  figures = {},       -- id -> figure
  current = nil,      -- the current figure's id
  exe = nil,          -- the program (setgnuplotexe), else found on PATH
  terms = nil,        -- the terminals the program has (a set)
  term = nil,         -- setterm's choice
}

-- for the tests: a PATH to search instead of $PATH
gnuplot._PATH = nil

---------------------------------------------------------------- helpers -----

local function fail(fn, fmt, ...)
  error(("gnuplot.%s: " .. fmt):format(fn, ...), 0)
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- a gnuplot string literal: single quotes ('' is a quote), one line
local function gp_string(s)
  return "'" .. tostring(s):gsub("[\r\n]+", " "):gsub("'", "''") .. "'"
end

local function is_executable(path)
  local f = io.open(path, "rb")
  if not f then return false end
  f:close()
  return os.execute("test -x " .. shell_quote(path) .. " -a -f " .. shell_quote(path)) == true
end

local function find_exe(fn)
  if state.exe then return state.exe end
  local path = gnuplot._PATH or os.getenv("PATH") or ""
  for dir in path:gmatch("[^:]+") do
    local p = dir .. "/gnuplot"
    if is_executable(p) then return p end
  end
  fail(fn, "the gnuplot program is not installed or not on PATH (Debian: apt-get install gnuplot-nox; " ..
    "gnuplot.setgnuplotexe(path) names another)")
end

-- the terminals the program has
local function terminals(fn)
  if state.terms then return state.terms end
  local exe = find_exe(fn)
  local p = io.popen(shell_quote(exe) .. " -e 'set terminal' 2>&1")
  local text = p and p:read("a") or ""
  if p then p:close() end
  local terms = {}
  for name in text:gmatch("\n%s*([%w_]+) ") do terms[name] = true end
  state.terms = terms
  return terms
end

local function is_inline() return rawget(torch, "_display_hook") ~= nil end

local function values(fn, what, x)
  if not torch.is_tensor(x) then fail(fn, "argument '%s' must be a tensor, got %s", what, type(x)) end
  if x:is_complex() then fail(fn, "argument '%s' is complex (plot its real and imaginary parts)", what) end
  return x:double():contiguous()
end

local function num(v)
  if v ~= v or v == math.huge or v == -math.huge then return "NaN" end
  return ("%.10g"):format(v)
end

---------------------------------------------------------------- figures -----

local Figure = {}
Figure.__index = Figure

local function new_figure(id, kind, path, term)
  local fig = setmetatable({ id = id, kind = kind, path = path, term = term, cmds = {}, plot = nil, dirty = false },
    Figure)
  state.figures[id] = fig
  state.current = id
  return fig
end

local function next_id()
  local id = 1
  while state.figures[id] do id = id + 1 end
  return id
end

-- where a new figure draws: inline, a window or a file (see the header)
local function default_figure(id, fn)
  if is_inline() then
    local fmt = (state.term == "svg") and "svg" or "png"
    return new_figure(id, "inline", nil, fmt)
  end
  if state.term == "dumb" then return new_figure(id, "dumb", nil, "dumb") end
  local terms = terminals(fn)
  if os.getenv("DISPLAY") or os.getenv("WAYLAND_DISPLAY") then
    local cands = state.term and { state.term } or WINDOW_TERMS
    for _, t in ipairs(cands) do
      if terms[t] then return new_figure(id, "window", nil, t) end
    end
  end
  return new_figure(id, "file", ("gnuplot_figure%d.png"):format(id), "png")
end

local function current(fn)
  local fig = state.current and state.figures[state.current]
  if fig then return fig end
  return default_figure(next_id(), fn)
end

-- a setting of the figure: one per slot (a later title replaces the earlier),
-- raw commands (slot nil) accumulate in order
function Figure:set(slot, text)
  if slot then
    for i = #self.cmds, 1, -1 do
      if self.cmds[i].slot == slot then table.remove(self.cmds, i) end
    end
  end
  if text then self.cmds[#self.cmds + 1] = { slot = slot, text = text } end
end

local function term_line(fig, fn)
  local t = fig.term
  if t == "png" then
    local terms = terminals(fn)
    local name = terms.pngcairo and "pngcairo" or "png"
    return ("set terminal %s noenhanced size %d,%d"):format(name, WIDTH, HEIGHT)
  elseif t == "svg" then
    return ("set terminal svg noenhanced size %d,%d"):format(WIDTH, HEIGHT)
  elseif t == "dumb" then
    return "set terminal dumb noenhanced size 79,24"
  end
  return ("set terminal %s %d noenhanced"):format(t, fig.id)
end

-- the whole script that draws fig into `output` (nil: the terminal's own)
function Figure:script(output, fn)
  local lines = { term_line(self, fn) }
  if output then lines[#lines + 1] = "set output " .. gp_string(output) end
  for _, c in ipairs(self.cmds) do lines[#lines + 1] = c.text end
  if self.plot then
    for i, block in ipairs(self.plot.data) do
      lines[#lines + 1] = ("$d%d << EOD"):format(i)
      lines[#lines + 1] = block
      lines[#lines + 1] = "EOD"
    end
    for _, s in ipairs(self.plot.pre) do lines[#lines + 1] = s end
    lines[#lines + 1] = self.plot.cmd
  end
  if output then lines[#lines + 1] = "unset output" end
  return table.concat(lines, "\n") .. "\n"
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- runs gnuplot on a script; its complaints become the error
local function run_script(fn, script)
  local exe = find_exe(fn)
  local sfile, efile = os.tmpname(), os.tmpname()
  local f = assert(io.open(sfile, "w"))
  f:write(script)
  f:close()
  local ok, how, code = os.execute(("%s %s 2>%s"):format(shell_quote(exe), shell_quote(sfile), shell_quote(efile)))
  local err = read_file(efile) or ""
  os.remove(sfile)
  os.remove(efile)
  if not ok then
    err = err:gsub("%s+$", "")
    if err == "" then err = ("gnuplot exited with %s %s"):format(tostring(how), tostring(code)) end
    fail(fn, "gnuplot could not draw the figure:\n%s", err)
  end
end

-- draws fig where it goes; inline figures wait for the end of the cell unless `now`
function Figure:draw(fn, now)
  if not self.plot then return end
  if self.kind == "inline" then
    self.dirty = true
    if now then return self:show_inline(fn) end
    torch._repl.on_cell_done("gnuplot", gnuplot._flush_inline)
    return
  end
  if self.kind == "window" then
    if not self.proc then
      local p = io.popen(shell_quote(find_exe(fn)) .. " -persist", "w")
      if not p then fail(fn, "cannot start gnuplot") end
      self.proc = p
    end
    self.proc:write("reset\n", self:script(nil, fn))
    self.proc:flush()
    return
  end
  if self.kind == "dumb" then
    io.stdout:flush()
    return run_script(fn, self:script(nil, fn))
  end
  run_script(fn, self:script(self.path, fn))
  if self.kind == "file" and not self.announced then
    self.announced = true
    print(("gnuplot: figure %d is drawn in %s (no display here)"):format(self.id, self.path))
  end
end

function Figure:show_inline(fn)
  self.dirty = false
  local out = os.tmpname()
  local ok, err = pcall(run_script, fn, self:script(out, fn))
  local bytes = read_file(out)
  os.remove(out)
  if not ok then error(err, 0) end
  if not bytes or #bytes == 0 then fail(fn, "gnuplot drew nothing") end
  local hook = rawget(torch, "_display_hook")
  if not hook then return end
  local mime = self.term == "svg" and "image/svg+xml" or "image/png"
  local bundle = { [mime] = bytes, ["text/plain"] = ("<gnuplot figure %d>"):format(self.id) }
  -- within one cell a figure keeps one picture, replaced on each drawing (a loss curve
  -- redrawn with plotflush() during training grows in place)
  if self.live_id then
    hook(bundle, { display_id = self.live_id, update = true })
  else
    state.displays = (state.displays or 0) + 1
    self.live_id = ("gnuplot-%d-%d"):format(self.id, state.displays)
    hook(bundle, { display_id = self.live_id })
  end
end

-- the end of a notebook cell: every figure changed in it is shown once
function gnuplot._flush_inline()
  torch._repl.on_cell_done("gnuplot", nil)
  local ids = {}
  for id, fig in pairs(state.figures) do
    if fig.kind == "inline" and fig.dirty then ids[#ids + 1] = id end
  end
  table.sort(ids)
  for _, id in ipairs(ids) do state.figures[id]:show_inline("plot") end
  for _, fig in pairs(state.figures) do fig.live_id = nil end
end

-- a setting changed: draw again when there is a plot (Torch7's replot)
local function setting(fn, slot, text)
  local fig = current(fn)
  fig:set(slot, text)
  fig:draw(fn)
end

---------------------------------------------------------------- plot --------

local STYLES = { ["-"] = "with lines", ["+"] = "with points", ["+-"] = "with linespoints", ["-+"] = "with linespoints",
  ["."] = "with dots", ["|"] = "with impulses", ["~"] = "smooth csplines with lines" }

local function style(fn, s, i)
  local w = STYLES[s]
  if not w then
    fail(fn, "series %d: unknown line style '%s' (one of '-', '+', '+-', '.', '|', '~')", i, tostring(s))
  end
  return w
end

-- Torch7's series forms: {y}, {x, y}, {name, y}, {y, style}, {name, x, y},
-- {name, y, style}, {x, y, style}, {name, x, y, style}
local function series(fn, t, i)
  local name, x, y, fmt
  local kinds = {}
  for j = 1, #t do kinds[j] = torch.is_tensor(t[j]) and "t" or type(t[j]) == "string" and "s" or "?" end
  local sig = table.concat(kinds)
  if sig == "t" then y = t[1]
  elseif sig == "tt" then x, y = t[1], t[2]
  elseif sig == "st" then name, y = t[1], t[2]
  elseif sig == "ts" then y, fmt = t[1], t[2]
  elseif sig == "stt" then name, x, y = t[1], t[2], t[3]
  elseif sig == "sts" then name, y, fmt = t[1], t[2], t[3]
  elseif sig == "tts" then x, y, fmt = t[1], t[2], t[3]
  elseif sig == "stts" then name, x, y, fmt = t[1], t[2], t[3], t[4]
  else
    fail(fn, "series %d: expected {[name,] [x,] y [, style]} (tensors x, y; strings name, style), got (%s)", i,
      sig == "" and "nothing" or sig:gsub("t", "tensor,"):gsub("s", "string,"):gsub("%?", "other,"):gsub(",$", ""))
  end
  y = values(fn, "y", y)
  if y:dim() ~= 1 then fail(fn, "series %d: y must be 1-D, got %d-D", i, y:dim()) end
  if x then
    x = values(fn, "x", x)
    if x:dim() ~= 1 or x:numel() ~= y:numel() then
      fail(fn, "series %d: x and y must be 1-D of one length, got %d and %d elements", i, x:numel(), y:numel())
    end
  end
  if y:numel() == 0 then fail(fn, "series %d: y is empty", i) end
  local ys, xs = y:tolist(), x and x:tolist()
  local rows = {}
  for k = 1, #ys do rows[k] = num(xs and xs[k] or k) .. " " .. num(ys[k]) end
  return { name = name, data = table.concat(rows, "\n"), with = style(fn, fmt or "-", i) }
end

-- the arguments: one series given flat (plot(x, y, '+')) or several tables
local function series_list(fn, ...)
  local args = table.pack(...)
  if args.n == 0 then fail(fn, "nothing to plot (expected tensors or {[name,] [x,] y [, style]} tables)") end
  if type(args[1]) ~= "table" or torch.is_tensor(args[1]) then return { series(fn, args, 1) } end
  local list = {}
  for i = 1, args.n do
    if type(args[i]) ~= "table" or torch.is_tensor(args[i]) then
      fail(fn, "argument %d: each series is a table {[name,] [x,] y [, style]}, got %s", i,
        torch.is_tensor(args[i]) and "a tensor" or type(args[i]))
    end
    list[i] = series(fn, args[i], i)
  end
  return list
end

local function title_of(name) return name and ("title " .. gp_string(name)) or "notitle" end

-- gnuplot.plot(...): line plots (the forms above); returns the figure's id
function gnuplot.plot(...)
  local list = series_list("plot", ...)
  local fig = current("plot")
  local data, parts = {}, {}
  for i, s in ipairs(list) do
    data[i] = s.data
    parts[i] = ("$d%d using 1:2 %s %s"):format(i, s.with, title_of(s.name))
  end
  fig.plot = { data = data, pre = {}, cmd = "plot " .. table.concat(parts, ", ") }
  fig:draw("plot")
  return fig.id
end

-- gnuplot.hist(x [, bins [, min, max]]): a histogram of x's values (torch.histc) as boxes
function gnuplot.hist(x, bins, lo, hi)
  x = values("hist", "x", x)
  if x:numel() == 0 then fail("hist", "argument 'x' is empty") end
  bins = bins or 10
  if math.type(bins) ~= "integer" or bins < 1 or bins > 100000 then
    fail("hist", "argument 'bins' must be an integer from 1 to 100000, got %s", tostring(bins))
  end
  if (lo == nil) ~= (hi == nil) then fail("hist", "arguments 'min' and 'max' go together") end
  if lo ~= nil and (type(lo) ~= "number" or type(hi) ~= "number" or not (lo < hi)) then
    fail("hist", "arguments 'min' and 'max' must be numbers with min < max, got %s and %s", tostring(lo), tostring(hi))
  end
  x = x:view(-1)
  lo = lo or x:min():item()
  hi = hi or x:max():item()
  if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
  local counts = torch.histc(x, bins, lo, hi):tolist()
  local w = (hi - lo) / bins
  local rows = {}
  for i = 1, bins do rows[i] = num(lo + (i - 0.5) * w) .. " " .. num(counts[i]) end
  local fig = current("hist")
  fig.plot = { data = { table.concat(rows, "\n") },
               pre = { "set style fill solid 0.5 border", ("set boxwidth %s absolute"):format(num(w)) },
               cmd = "plot $d1 using 1:2 with boxes notitle" }
  fig:draw("hist")
  return fig.id
end

-- gnuplot.imagesc(z [, 'gray' | 'color']): a matrix as an image, row 1 at the top
function gnuplot.imagesc(z, palette)
  z = values("imagesc", "z", z)
  if z:dim() ~= 2 or z:numel() == 0 then fail("imagesc", "argument 'z' must be a non-empty 2-D tensor, got %d-D", z:dim()) end
  palette = palette or "gray"
  if palette ~= "gray" and palette ~= "color" then
    fail("imagesc", "argument 'palette' must be 'gray' or 'color', got %s", tostring(palette))
  end
  local h, w = z.shape[1], z.shape[2]
  local list, rows = z:tolist(), {}
  for r = 1, h do
    local cells = {}
    for c = 1, w do cells[c] = num(list[r][c]) end
    rows[r] = table.concat(cells, " ")
  end
  local fig = current("imagesc")
  fig.plot = { data = { table.concat(rows, "\n") },
               pre = { palette == "gray" and "set palette gray" or "set palette rgbformulae 7,5,15",
                       "set size ratio -1", ("set xrange [-0.5:%s]"):format(num(w - 0.5)),
                       ("set yrange [%s:-0.5]"):format(num(h - 0.5)), "set tics out" },
               cmd = "plot $d1 matrix with image notitle" }
  fig:draw("imagesc")
  return fig.id
end

-- splot's series: {z}, {x, y, z}, {name, z}, {name, x, y, z} (x, y, z: 2-D of one shape)
local function surface(fn, t, i)
  local kinds = {}
  for j = 1, #t do kinds[j] = torch.is_tensor(t[j]) and "t" or type(t[j]) == "string" and "s" or "?" end
  local sig = table.concat(kinds)
  local name, x, y, z
  if sig == "t" then z = t[1]
  elseif sig == "st" then name, z = t[1], t[2]
  elseif sig == "ttt" then x, y, z = t[1], t[2], t[3]
  elseif sig == "sttt" then name, x, y, z = t[1], t[2], t[3], t[4]
  else fail(fn, "series %d: expected {[name,] z} or {[name,] x, y, z} (2-D tensors)", i) end
  z = values(fn, "z", z)
  if z:dim() ~= 2 or z:numel() == 0 then fail(fn, "series %d: z must be a non-empty 2-D tensor, got %d-D", i, z:dim()) end
  local zl, xl, yl = z:tolist()
  if x then
    x, y = values(fn, "x", x), values(fn, "y", y)
    if not (x:dim() == 2 and y:dim() == 2 and x.shape[1] == z.shape[1] and x.shape[2] == z.shape[2]
            and y.shape[1] == z.shape[1] and y.shape[2] == z.shape[2]) then
      fail(fn, "series %d: x, y and z must be 2-D tensors of one shape", i)
    end
    xl, yl = x:tolist(), y:tolist()
  end
  local blocks = {}
  for r = 1, z.shape[1] do
    local rows = {}
    for c = 1, z.shape[2] do
      rows[c] = num(xl and xl[r][c] or c) .. " " .. num(yl and yl[r][c] or r) .. " " .. num(zl[r][c])
    end
    blocks[r] = table.concat(rows, "\n")
  end
  return { name = name, data = table.concat(blocks, "\n\n") }
end

-- gnuplot.splot(...): surfaces (the forms above) drawn with pm3d
function gnuplot.splot(...)
  local args = table.pack(...)
  if args.n == 0 then fail("splot", "nothing to plot (expected z, or x, y, z, or {[name,] ...} tables)") end
  local list = {}
  if type(args[1]) ~= "table" or torch.is_tensor(args[1]) then
    list[1] = surface("splot", args, 1)
  else
    for i = 1, args.n do
      if type(args[i]) ~= "table" or torch.is_tensor(args[i]) then
        fail("splot", "argument %d: each series is a table {[name,] [x, y,] z}, got %s", i, type(args[i]))
      end
      list[i] = surface("splot", args[i], i)
    end
  end
  local fig = current("splot")
  local data, parts = {}, {}
  for i, s in ipairs(list) do
    data[i] = s.data
    parts[i] = ("$d%d using 1:2:3 with pm3d %s"):format(i, title_of(s.name))
  end
  fig.plot = { data = data, pre = {}, cmd = "splot " .. table.concat(parts, ", ") }
  fig:draw("splot")
  return fig.id
end

---------------------------------------------------------------- figures -----

-- gnuplot.figure([n]): selects figure n (made when new), or makes a new one; its id
function gnuplot.figure(n)
  if n ~= nil and (math.type(n) ~= "integer" or n < 1) then
    fail("figure", "argument 'n' must be a positive integer, got %s", tostring(n))
  end
  n = n or next_id()
  if state.figures[n] then state.current = n else default_figure(n, "figure") end
  return n
end

local function file_figure(fn, path, term)
  if type(path) ~= "string" or path == "" then fail(fn, "argument 'fname' must be a file name, got %s", type(path)) end
  local id = next_id()
  new_figure(id, term, path, term)
  return id
end

-- gnuplot.pngfigure(fname) / svgfigure(fname): a new figure drawn into that file
function gnuplot.pngfigure(fname) return file_figure("pngfigure", fname, "png") end
function gnuplot.svgfigure(fname) return file_figure("svgfigure", fname, "svg") end

-- gnuplot.plotflush([n]): draws the figure now (an inline one is shown at once)
function gnuplot.plotflush(n)
  local fig = n and state.figures[n] or (not n and current("plotflush"))
  if not fig then fail("plotflush", "there is no figure %s", tostring(n)) end
  fig:draw("plotflush", true)
end

local function close_figure(fig)
  if fig.proc then fig.proc:close() end
  state.figures[fig.id] = nil
  if state.current == fig.id then state.current = nil end
end

-- gnuplot.close([n]): closes figure n (the current one by default)
function gnuplot.close(n)
  local fig = state.figures[n or state.current or -1]
  if not fig then
    if n then fail("close", "there is no figure %s", tostring(n)) end
    return
  end
  close_figure(fig)
end

function gnuplot.closeall()
  for _, fig in pairs(state.figures) do close_figure(fig) end
  state.figures, state.current = {}, nil
end

---------------------------------------------------------------- settings ----

local function label(fn, slot, what, text)
  if type(text) ~= "string" and type(text) ~= "number" then
    fail(fn, "argument 'label' must be a string, got %s", type(text))
  end
  setting(fn, slot, ("set %s %s"):format(what, gp_string(text)))
end

function gnuplot.title(text) label("title", "title", "title", text) end
function gnuplot.xlabel(text) label("xlabel", "xlabel", "xlabel", text) end
function gnuplot.ylabel(text) label("ylabel", "ylabel", "ylabel", text) end
function gnuplot.zlabel(text) label("zlabel", "zlabel", "zlabel", text) end

local function toggle(fn, on)
  if on == nil then return true end
  if type(on) ~= "boolean" then fail(fn, "argument 'on' must be a boolean, got %s", type(on)) end
  return on
end

-- gnuplot.grid([on])
function gnuplot.grid(on) setting("grid", "grid", toggle("grid", on) and "set grid" or "unset grid") end

-- gnuplot.logscale([on]): both axes logarithmic
function gnuplot.logscale(on)
  setting("logscale", "logscale", toggle("logscale", on) and "set logscale xy" or "unset logscale")
end

local KEY_WORDS = { left = true, right = true, center = true, top = true, bottom = true, inside = true,
  outside = true, box = true, nobox = true, above = true, below = true }

-- gnuplot.legend([on | position]): shows (true), hides (false) or moves ('top left') the legend
function gnuplot.legend(arg)
  if arg == nil or arg == true then return setting("legend", "legend", "set key") end
  if arg == false then return setting("legend", "legend", "unset key") end
  if type(arg) ~= "string" then fail("legend", "argument must be a boolean or a position such as 'top left', got %s", type(arg)) end
  for w in arg:gmatch("%S+") do
    if not KEY_WORDS[w] then
      fail("legend", "unknown position word '%s' (left, right, center, top, bottom, inside, outside, box)", w)
    end
  end
  setting("legend", "legend", "set key " .. arg)
end

-- Torch7's gnuplot.movelegend(hloc, vloc)
function gnuplot.movelegend(h, v) gnuplot.legend(tostring(h) .. " " .. tostring(v)) end

local function bound(fn, v, i)
  if v == nil or v == "" then return "*" end
  if type(v) ~= "number" or v ~= v then fail(fn, "argument 'limits'[%d] must be a number (or '' for automatic)", i) end
  return num(v)
end

-- gnuplot.axis({xmin, xmax, ymin, ymax [, zmin, zmax]} | 'auto' | 'equal')
function gnuplot.axis(a)
  if a == "auto" then
    return setting("axis", "axis", "set autoscale; set size noratio")
  elseif a == "equal" or a == "image" then
    return setting("axis", "axis", "set size ratio -1")
  end
  if type(a) ~= "table" or (#a ~= 4 and #a ~= 6) then
    fail("axis", "argument 'limits' must be {xmin, xmax, ymin, ymax [, zmin, zmax]}, 'auto' or 'equal', got %s",
      type(a) == "table" and ("a table of %d"):format(#a) or type(a))
  end
  local parts = { ("set xrange [%s:%s]"):format(bound("axis", a[1], 1), bound("axis", a[2], 2)),
                  ("set yrange [%s:%s]"):format(bound("axis", a[3], 3), bound("axis", a[4], 4)) }
  if #a == 6 then parts[3] = ("set zrange [%s:%s]"):format(bound("axis", a[5], 5), bound("axis", a[6], 6)) end
  setting("axis", "axis", table.concat(parts, "; "))
end

-- gnuplot.raw(cmd): a gnuplot command for the current figure; a `plot`/`splot`
-- command becomes its plot
function gnuplot.raw(cmd)
  if type(cmd) ~= "string" then fail("raw", "argument 'cmd' must be a string, got %s", type(cmd)) end
  local fig = current("raw")
  if cmd:find("^%s*s?plot%s") then
    fig.plot = { data = {}, pre = {}, cmd = cmd }
  elseif not cmd:find("^%s*replot%s*$") then
    fig:set(nil, cmd)
  end
  fig:draw("raw")
end

-- gnuplot.setterm(term): the terminal of new figures: 'png' or 'svg' inline in a
-- notebook; a window terminal ('qt', 'wxt', 'x11') or 'dumb' (text) elsewhere
function gnuplot.setterm(term)
  if type(term) ~= "string" then fail("setterm", "argument 'term' must be a string, got %s", type(term)) end
  if term ~= "png" and term ~= "svg" and term ~= "dumb" and not terminals("setterm")[term] then
    fail("setterm", "this gnuplot has no terminal '%s'", term)
  end
  state.term = term
end

-- gnuplot.setgnuplotexe(path): the gnuplot program to run
function gnuplot.setgnuplotexe(path)
  if type(path) ~= "string" or not is_executable(path) then
    fail("setgnuplotexe", "argument 'exe' must be an executable file, got %s", tostring(path))
  end
  state.exe, state.terms = path, nil
end

-- the script that draws figure n (the current one), for tests and debugging
function gnuplot._script(n)
  local fig = n and state.figures[n] or current("_script")
  return fig:script(fig.path or "OUTPUT", "_script")
end

return gnuplot
