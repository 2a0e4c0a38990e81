-- test_gnuplot.lua — lib/gnuplot: the scripts Torch7's argument forms generate
-- (plot's series, hist, imagesc, splot, labels, legend, axis, grid, raw), the
-- PNG and SVG files the gnuplot program draws from them, inline figures shown
-- once through torch._display_hook at the end of a notebook cell, and the
-- errors for bad arguments and a missing program.
local T = require "testing"
local gnuplot = require "gnuplot"

local S = T.scratch()

local function have_gnuplot()
  local p = io.popen("command -v gnuplot 2>/dev/null")
  local r = p and p:read("a") or ""
  if p then p:close() end
  return r ~= ""
end

local function find(s, text) return s:find(text, 1, true) ~= nil end

local function is_png(path)
  local f = io.open(path, "rb")
  if not f then return false end
  local b = f:read("a")
  f:close()
  return b:sub(1, 8) == "\137PNG\r\n\26\n" and #b > 1000
end

T.test("the missing program is a clear error", function()
  gnuplot.closeall()
  gnuplot._PATH = S.path("no-such-dir")
  gnuplot.svgfigure(S.path("never.svg"))
  local err = T.raises(function() gnuplot.plot(torch.ones(3)) end, "gnuplot.plot", "not installed", "gnuplot-nox")
  gnuplot._PATH = nil
  T.raises(function() gnuplot.setgnuplotexe(S.path("nothing")) end, "gnuplot.setgnuplotexe", "argument 'exe'")
  gnuplot.closeall()
  return err
end)

if not have_gnuplot() then
  T.skip("the drawing tests", "the gnuplot program is not installed (apt-get install gnuplot-nox)")
  T.done()
  return
end

T.test("plot(y): y against 1..n in a datablock, drawn with lines into the PNG", function()
  gnuplot.closeall()
  local path = S.path("y.png")
  local id = gnuplot.pngfigure(path)
  T.eq(gnuplot.plot(torch.tensor({ 3, 1, 2 })), id)
  local s = gnuplot._script()
  T.ok(find(s, "set terminal png"), s)
  T.ok(find(s, "set output '" .. path .. "'"), s)
  T.ok(find(s, "$d1 << EOD\n1 3\n2 1\n3 2\nEOD"), s)
  T.ok(find(s, "plot $d1 using 1:2 with lines notitle"), s)
  T.ok(is_png(path), "no PNG at " .. path)
end)

T.test("Torch7's series forms: {x, y}, {name, x, y, style}, several series, flat arguments", function()
  gnuplot.closeall()
  gnuplot.svgfigure(S.path("series.svg"))
  local x, y = torch.tensor({ 0.5, 1.5 }), torch.tensor({ 10, 20 })
  gnuplot.plot({ x, y })
  T.ok(find(gnuplot._script(), "$d1 << EOD\n0.5 10\n1.5 20\nEOD"))
  gnuplot.plot({ "up", x, y, "+" }, { "down", x, -y, "+-" }, { "idx", y, "|" })
  local s = gnuplot._script()
  T.ok(find(s, "plot $d1 using 1:2 with points title 'up', $d2 using 1:2 with linespoints title 'down', " ..
                "$d3 using 1:2 with impulses title 'idx'"), s)
  T.ok(find(s, "$d2 << EOD\n0.5 -10\n1.5 -20\nEOD"), s)
  T.ok(find(s, "$d3 << EOD\n1 10\n2 20\nEOD"), s)
  gnuplot.plot(x, y, ".")
  T.ok(find(gnuplot._script(), "plot $d1 using 1:2 with dots notitle"))
  gnuplot.plot("named", y)
  T.ok(find(gnuplot._script(), "title 'named'"))
  local f = io.open(S.path("series.svg"))
  local svg = f:read("a")
  f:close()
  T.ok(find(svg, "<svg"), "no SVG drawn")
end)

T.test("settings: labels (quoted), a later title replaces the earlier, grid, legend, axis, logscale", function()
  gnuplot.closeall()
  gnuplot.svgfigure(S.path("settings.svg"))
  gnuplot.plot(torch.ones(2))
  gnuplot.title("first")
  gnuplot.title("it's second")
  gnuplot.xlabel("x_axis")
  gnuplot.ylabel("y")
  gnuplot.grid(true)
  gnuplot.legend("top left")
  gnuplot.axis({ 0, 1, "", 5 })
  gnuplot.logscale(false)
  local s = gnuplot._script()
  T.ok(not find(s, "first"), s)
  T.ok(find(s, "set title 'it''s second'"), s)
  T.ok(find(s, "set xlabel 'x_axis'") and find(s, "set ylabel 'y'"), s)
  T.ok(find(s, "set grid") and find(s, "set key top left") and find(s, "unset logscale"), s)
  T.ok(find(s, "set xrange [0:1]; set yrange [*:5]"), s)
  T.ok(find(s, "noenhanced"), "labels are taken literally (x_axis is no subscript)")
  gnuplot.grid(false)
  gnuplot.legend(false)
  s = gnuplot._script()
  T.ok(find(s, "unset grid") and find(s, "unset key") and not find(s, "set key top left"), s)
end)

T.test("hist: the counts of torch.histc as boxes", function()
  gnuplot.closeall()
  local path = S.path("hist.png")
  gnuplot.pngfigure(path)
  gnuplot.hist(torch.tensor({ 0, 0, 1, 2, 2, 2 }), 3)
  local s = gnuplot._script()
  T.ok(find(s, "with boxes"), s)
  local total = 0
  for c in s:match("EOD\n(.-)\nEOD"):gmatch("%S+ (%S+)") do total = total + tonumber(c) end
  T.eq(total, 6)
  T.ok(find(s, "2 3\nEOD") or find(s, "1.666666667 3\nEOD"), s)
  T.ok(is_png(path))
end)

T.test("imagesc: a matrix as an image with row 1 on top; splot: a surface", function()
  gnuplot.closeall()
  local path = S.path("img.png")
  gnuplot.pngfigure(path)
  gnuplot.imagesc(torch.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }))
  local s = gnuplot._script()
  T.ok(find(s, "$d1 << EOD\n1 2 3\n4 5 6\nEOD"), s)
  T.ok(find(s, "matrix with image") and find(s, "set palette gray") and find(s, "set yrange [1.5:-0.5]"), s)
  T.ok(is_png(path))
  gnuplot.imagesc(torch.eye(2), "color")
  T.ok(find(gnuplot._script(), "rgbformulae"))
  local spath = S.path("surf.png")
  gnuplot.pngfigure(spath)
  gnuplot.splot({ "bowl", torch.tensor({ { 1, 2 }, { 3, 4 } }) })
  s = gnuplot._script()
  T.ok(find(s, "$d1 << EOD\n1 1 1\n2 1 2\n\n1 2 3\n2 2 4\nEOD"), s)
  T.ok(find(s, "splot $d1 using 1:2:3 with pm3d title 'bowl'"), s)
  T.ok(is_png(spath))
end)

T.test("raw commands accumulate; a raw plot becomes the figure's plot; a gnuplot error is reported", function()
  gnuplot.closeall()
  local path = S.path("raw.png")
  gnuplot.pngfigure(path)
  gnuplot.raw("set xrange [-3:3]")
  gnuplot.raw("plot sin(x) title 'sine'")
  local s = gnuplot._script()
  T.ok(find(s, "set xrange [-3:3]\nplot sin(x) title 'sine'"), s)
  T.ok(is_png(path))
  T.raises(function() gnuplot.raw("set nonsense_setting 3") end, "gnuplot.raw", "gnuplot could not draw")
end)

T.test("figures: figure(n) selects, close removes, plotflush draws", function()
  gnuplot.closeall()
  local a = gnuplot.pngfigure(S.path("a.png"))
  local b = gnuplot.pngfigure(S.path("b.png"))
  T.ok(a ~= b)
  gnuplot.plot(torch.ones(2))
  T.ok(find(gnuplot._script(), "b.png"))
  T.eq(gnuplot.figure(a), a)
  T.ok(find(gnuplot._script(), "a.png"))
  gnuplot.raw("plot x")
  gnuplot.plotflush()
  T.ok(is_png(S.path("a.png")))
  gnuplot.close(a)
  T.raises(function() gnuplot.close(a) end, "gnuplot.close", "no figure")
  gnuplot.closeall()
  T.raises(function() gnuplot.plotflush(b) end, "gnuplot.plotflush", "no figure")
end)

T.test("in a notebook, a figure is shown once when the cell ends, as a PNG bundle", function()
  gnuplot.closeall()
  local shown = {}
  torch._display_hook = function(bundle, opts) shown[#shown + 1] = bundle end
  local ok, err = pcall(function()
    gnuplot.plot(torch.linspace(0, 1, 5))
    gnuplot.title("inline")
    gnuplot.xlabel("x")
    T.eq(#shown, 0)
    torch._repl.cell_done()
    T.eq(#shown, 1)
    T.ok(shown[1]["image/png"]:sub(1, 4) == "\137PNG", "not a PNG")
    T.eq(shown[1]["text/plain"], "<gnuplot figure 1>")
    torch._repl.cell_done()
    T.eq(#shown, 1)   -- nothing changed: nothing shown again
    gnuplot.plotflush()
    T.eq(#shown, 2)   -- plotflush shows it at once
    gnuplot.setterm("svg")
    gnuplot.figure()
    gnuplot.plot(torch.ones(3))
    torch._repl.cell_done()
    T.eq(#shown, 3)
    T.ok(find(shown[3]["image/svg+xml"] or "", "<svg"), "not an SVG bundle")
  end)
  torch._display_hook = nil
  gnuplot.setterm("png")
  gnuplot.closeall()
  if not ok then error(err, 0) end
end)

T.test("bad arguments name the function and the argument", function()
  gnuplot.closeall()
  gnuplot.svgfigure(S.path("bad.svg"))
  local x = torch.ones(3)
  T.raises(function() gnuplot.plot() end, "gnuplot.plot", "nothing to plot")
  T.raises(function() gnuplot.plot({ x }, 3) end, "gnuplot.plot", "argument 2")
  T.raises(function() gnuplot.plot(x, "*") end, "gnuplot.plot", "unknown line style '*'")
  T.raises(function() gnuplot.plot(torch.ones(3), torch.ones(4)) end, "gnuplot.plot", "one length")
  T.raises(function() gnuplot.plot(torch.ones(2, 2)) end, "gnuplot.plot", "1-D")
  T.raises(function() gnuplot.plot({ "a", "b" }) end, "gnuplot.plot", "series 1")
  T.raises(function() gnuplot.hist(x, 0) end, "gnuplot.hist", "argument 'bins'")
  T.raises(function() gnuplot.hist(x, 3, 1) end, "gnuplot.hist", "'min' and 'max'")
  T.raises(function() gnuplot.hist("x") end, "gnuplot.hist", "argument 'x' must be a tensor")
  T.raises(function() gnuplot.imagesc(x) end, "gnuplot.imagesc", "argument 'z'", "2-D")
  T.raises(function() gnuplot.imagesc(torch.eye(2), "rainbow") end, "gnuplot.imagesc", "argument 'palette'")
  T.raises(function() gnuplot.splot(x) end, "gnuplot.splot", "2-D")
  T.raises(function() gnuplot.axis({ 1, 2 }) end, "gnuplot.axis", "argument 'limits'")
  T.raises(function() gnuplot.legend("middle") end, "gnuplot.legend", "'middle'")
  T.raises(function() gnuplot.title(nil) end, "gnuplot.title", "argument 'label'")
  T.raises(function() gnuplot.grid("yes") end, "gnuplot.grid", "argument 'on'")
  T.raises(function() gnuplot.figure(0) end, "gnuplot.figure", "argument 'n'")
  T.raises(function() gnuplot.pngfigure(3) end, "gnuplot.pngfigure", "argument 'fname'")
  T.raises(function() gnuplot.raw(1) end, "gnuplot.raw", "argument 'cmd'")
  T.raises(function() gnuplot.setterm("no_such_term") end, "gnuplot.setterm", "no_such_term")
  gnuplot.closeall()
end)

T.test("without a notebook or a display, a figure is drawn into gnuplot_figureN.png", function()
  if os.getenv("DISPLAY") or os.getenv("WAYLAND_DISPLAY") then return end
  gnuplot.closeall()
  local id = gnuplot.figure()
  T.ok(find(gnuplot._script(), ("set output 'gnuplot_figure%d.png'"):format(id)))
  gnuplot.closeall()
end)

T.test("torch.display outside a notebook prints the text form", function()
  local tmp = S.path("display.txt")
  local out = io.output()
  io.output(tmp)
  local real_write = io.write
  torch.display(torch.tensor({ 1, 2 }))
  torch.display({ ["text/plain"] = "just text", ["text/html"] = "<b>x</b>" })
  io.output():close()
  io.output(out)
  local f = io.open(tmp)
  local s = f:read("a")
  f:close()
  T.eq(s, "tensor([1, 2])\njust text\n")
  T.raises(function() torch.display(1, 2) end, "torch.display", "argument 'opts'")
  return real_write
end)

S.remove()
T.done()
