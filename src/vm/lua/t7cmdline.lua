-- t7cmdline.lua — torch.CmdLine, Torch7's command-line parser, installed by
-- Torch7 mode (torch._t7_cmdline(torch), called from torch7.lua). Written for
-- lutorch from Torch7's documentation (doc/cmdline.md): options with defaults
-- and help, positional arguments, help text, -h, the options table parse
-- returns, a directory name made of the non-default options, and a log that
-- tees print to a file.
local torch = ...

function torch._t7_cmdline(torch)
  local CmdLine = torch.class("torch.CmdLine", torch)

  -- "-lr" and "--lr" are the option lr in the table parse returns
  local function bare(key) return (key:gsub("^%-+", "")) end

  function CmdLine:__init(argseparator, keyseparator)
    self.argseparator = argseparator or ","
    self.keyseparator = keyseparator or "="
    self.options = {}      -- "-name" -> { key, default, help, type }
    self.arguments = {}    -- in order: { key, help, type }
    self.helplines = {}    -- options, arguments and text lines, in the order given
    self.dateformat = nil
    self.silentio = false
  end

  function CmdLine:option(key, default, help, kind)
    if type(key) ~= "string" or key:sub(1, 1) ~= "-" then
      error("CmdLine:option: argument 'name' must be a string starting with '-', got " .. tostring(key), 2)
    end
    if default == nil then error("CmdLine:option: option " .. key .. " has no default value", 2) end
    kind = kind or type(default)
    if type(default) ~= kind then
      error(("CmdLine:option: option %s has a default of type %s, not %s"):format(key, type(default), kind), 2)
    end
    local o = { key = key, default = default, help = help, type = kind }
    self.options[key] = o
    self.helplines[#self.helplines + 1] = o
  end

  function CmdLine:argument(key, help, kind)
    if type(key) ~= "string" then error("CmdLine:argument: argument 'name' must be a string", 2) end
    local a = { key = key, help = help, type = kind }
    self.arguments[#self.arguments + 1] = a
    self.helplines[#self.helplines + 1] = a
  end

  function CmdLine:text(txt)
    txt = txt or ""
    if type(txt) ~= "string" then error("CmdLine:text: argument 'text' must be a string", 2) end
    self.helplines[#self.helplines + 1] = txt
  end

  function CmdLine:silent() self.silentio = true end

  -- log lines start with os.date(format) and "[name]: " when a name is given
  function CmdLine:addTime(name, format)
    format = format or "%F %T"
    if type(format) ~= "string" then error("CmdLine:addTime: argument 'format' must be a string", 2) end
    self.dateformat = format .. (name ~= nil and ("[" .. tostring(name) .. "]: ") or "")
  end

  -- the options' defaults, keyed by bare name
  function CmdLine:default()
    local p = {}
    for key, o in pairs(self.options) do p[bare(key)] = o.default end
    return p
  end

  function CmdLine:help(arg)
    local out = {}
    out[1] = "Usage: " .. ((arg and arg[0]) and (tostring(arg[0]) .. " ") or "") .. "[options]"
    for _, a in ipairs(self.arguments) do out[1] = out[1] .. " <" .. bare(a.key) .. ">" end
    -- one column wide enough for every option name and <argument>
    local width = 0
    local function label(h) return h.default ~= nil and h.key or ("<" .. bare(h.key) .. ">") end
    for _, h in ipairs(self.helplines) do
      if type(h) == "table" then width = math.max(width, #label(h)) end
    end
    for _, h in ipairs(self.helplines) do
      if type(h) == "table" then
        local l = label(h)
        local line = "  " .. l .. (" "):rep(width - #l)
        if h.help then line = line .. " " .. h.help end
        if h.default ~= nil then line = line .. " [" .. tostring(h.default) .. "]" end
        out[#out + 1] = line
      else
        out[#out + 1] = h
      end
    end
    io.write(table.concat(out, "\n"), "\n")
  end

  -- a bad command line: the reason on stderr, the help, exit status 1
  function CmdLine:error(msg)
    io.write("\n")
    io.stderr:write(msg)
    io.write("\n")
    self:help()
    os.exit(1)
  end

  local help_flags = { ["-h"] = true, ["-help"] = true, ["--help"] = true }

  function CmdLine:parse(arg)
    arg = arg or _G.arg or {}
    local params = self:default()
    local i, npos = 1, 0
    while i <= #arg do
      local word = arg[i]
      if help_flags[word] then
        self:help(arg)
        os.exit(0)
      end
      local o = self.options[word]
      if o then
        if o.type == "boolean" then
          -- a flag: given, it is the opposite of its default
          params[bare(word)] = not o.default
          i = i + 1
        else
          local v = arg[i + 1]
          if v == nil then self:error("missing argument for option " .. word) end
          if o.type == "number" then
            local n = tonumber(v)
            if n == nil then self:error("invalid type for option " .. word .. " (should be number)") end
            v = n
          elseif o.type ~= "string" then
            self:error("unknown required option type " .. tostring(o.type))
          end
          params[bare(word)] = v
          i = i + 2
        end
      else
        npos = npos + 1
        local a = self.arguments[npos]
        if not a then self:error("invalid argument: " .. tostring(word)) end
        local v = word
        if a.type == "number" then
          v = tonumber(word)
          if v == nil then self:error("invalid argument type for argument " .. a.key .. " (should be number)") end
        elseif a.type ~= nil and a.type ~= "string" then
          self:error("invalid argument type for argument " .. a.key .. " (should be " .. tostring(a.type) .. ")")
        end
        params[bare(a.key)] = v
        i = i + 1
      end
    end
    if npos ~= #self.arguments then self:error("not enough arguments") end
    return params
  end

  -- prefix, then the arguments in order, then the non-default options sorted,
  -- each as key=value (booleans t and f), joined by the separator
  function CmdLine:string(prefix, params, ignore)
    prefix, ignore = prefix or "", ignore or {}
    if type(params) ~= "table" then error("CmdLine:string: argument 'params' must be a table", 2) end
    local parts, opts = {}, {}
    local function show(v)
      if type(v) == "boolean" then return v and "t" or "f" end
      return tostring(v)
    end
    for n, a in ipairs(self.arguments) do
      local k = bare(a.key)
      if params[k] ~= nil and not ignore[k] then parts[#parts + 1] = k .. self.keyseparator .. show(params[k]) end
    end
    for k, v in pairs(params) do
      local o = self.options["-" .. k]
      if o and not ignore[k] and (v ~= o.default or ignore[k] == false) then
        opts[#opts + 1] = k .. self.keyseparator .. show(v)
      end
    end
    table.sort(opts)
    for _, s in ipairs(opts) do parts[#parts + 1] = s end
    if #parts == 0 then return prefix end
    return prefix .. self.argseparator .. table.concat(parts, self.argseparator)
  end

  -- from now on print also writes to file (a name or an open file), each line
  -- after the addTime prefix; silent() keeps it off the screen. Then the
  -- parameters, sorted by name.
  function CmdLine:log(file, params)
    local f = file
    if io.type(file) ~= "file" then
      local err
      f, err = io.open(tostring(file), "w")
      if not f then error("CmdLine:log: cannot open " .. tostring(file) .. ": " .. tostring(err), 2) end
    end
    local screen = self._screen_print or print
    self._screen_print = screen
    local cmd = self
    print = function(...)
      if not cmd.silentio then screen(...) end
      local n = select("#", ...)
      local words = {}
      for i = 1, n do words[i] = tostring((select(i, ...))) end
      f:write((cmd.dateformat and os.date(cmd.dateformat) or ""), table.concat(words, "\t"), "\n")
      f:flush()
    end
    print("[program started on " .. os.date() .. "]")
    print("[command line arguments]")
    if params then
      local keys = {}
      for k in pairs(params) do keys[#keys + 1] = k end
      table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
      for _, k in ipairs(keys) do print(k, params[k]) end
    end
    print("[----------------------]")
  end
end
