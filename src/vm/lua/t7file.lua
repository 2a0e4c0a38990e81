-- t7file.lua — Torch7 mode's files and serialization: torch.File and its
-- DiskFile, MemoryFile and PipeFile, with Torch7's typed reads and writes
-- (binary or ascii, auto spacing, quiet or pedantic), writeObject/readObject
-- (references, cycles, torch.class objects and their __write/__read hooks,
-- tensors, storages, generators), torch.serialize/deserialize and
-- torch.save/load writing real .t7 bytes. Installed by torch._t7_install
-- (torch7.lua) through torch._t7file_install; nothing here runs in PyTorch
-- mode. The bytes and the element loops are C (src/vm/lt7file.c over
-- src/serial/t7_write.c): a file's contents are a byte buffer, read whole
-- when it is opened and written out by synchronize and close.
local torch = ...

function torch._t7file_install(torch, storage_methods)
  local STEMS = { "Byte", "Char", "Short", "Int", "Long", "Float", "Double", "Half" }
  local is_stem = {}
  for _, s in ipairs(STEMS) do is_stem[s] = true end

  local T_NIL, T_NUMBER, T_STRING, T_TABLE, T_TORCH, T_BOOLEAN = 0, 1, 2, 3, 4, 5
  local T_FUNCTION, T_LEGACY_RECUR, T_RECUR = 6, 7, 8

  local gen_mt = getmetatable(torch.Generator())
  local function is_gen(v) return v ~= nil and getmetatable(v) == gen_mt end


  -- s:string() is a Char or Byte storage's bytes as a Lua string;
  -- s:string(str) makes s hold the bytes of str
  function storage_methods.string(s, str)
    local t = rawget(s, "_t")
    if str == nil then return torch._t7bytes(t):read(0) end
    if type(str) ~= "string" then error(("string: argument 'str' must be a string, got %s"):format(type(str)), 2) end
    local name = torch.typename(s):match("^torch%.(%a+)Storage$")
    if name ~= "Char" and name ~= "Byte" then error("string: only a CharStorage or ByteStorage holds a string", 2) end
    storage_methods.resize(s, #str)
    if #str > 0 then rawget(s, "_t"):copy(torch._t7bytes(str):tensor(name)) end
    return s
  end

  local File = torch.class("torch.File", torch)

  -- the encoding arguments of the byte buffer's typed calls
  local function codec(f) return not f._binary, f._autospacing, f._long, f._big end

  local function fail(f, op, msg)
    f._err = true
    if not f._quiet then error(op .. ": " .. msg, 3) end
  end
  local function check_open(f, op)
    if f._closed then error(op .. ": attempt to use a closed file", 3) end
  end
  local function check_read(f, op)
    check_open(f, op)
    if not f._readable then error(op .. ": attempt to read in a write-only file", 3) end
  end
  local function check_write(f, op)
    check_open(f, op)
    if not f._writable then error(op .. ": attempt to write in a read-only file", 3) end
  end

  -- common state of every file: an empty buffer, ascii, auto spacing, pedantic
  local function init(f, bytes, readable, writable)
    f._b = bytes
    f._pos = 0
    f._readable, f._writable = readable, writable
    f._binary, f._autospacing, f._quiet, f._err = false, true, false, false
    f._long = 8
    f._big = false
    f._closed = false
  end

  -- ---- modes ----
  function File:binary() self._binary = true; return self end
  function File:ascii() self._binary = false; return self end
  function File:isBinary() return self._binary end
  function File:autoSpacing() self._autospacing = true; return self end
  function File:noAutoSpacing() self._autospacing = false; return self end
  function File:isAutoSpacing() return self._autospacing end
  function File:quiet() self._quiet = true; return self end
  function File:pedantic() self._quiet = false; return self end
  function File:isQuiet() return self._quiet end
  function File:hasError() return self._err end
  function File:clearError() self._err = false; return self end
  function File:isReadable() return self._readable end
  function File:isWritable() return self._writable end
  function File:isOpened() return not self._closed end
  -- longSize(n): the bytes of a long in binary files (4 reads files written on
  -- 32-bit machines or with longSize(4); 0 is the native 8)
  function File:longSize(n)
    if n ~= 0 and n ~= 4 and n ~= 8 then
      error(("longSize: argument 'size' must be 0, 4 or 8, got %s"):format(tostring(n)), 2)
    end
    self._long = n == 4 and 4 or 8
    return self
  end

  -- binary byte order: Torch7 wrote the machine's (little-endian on every
  -- machine it ran on); big-endian files read and write with bigEndianEncoding()
  local little_cpu = string.pack("=i2", 1) == string.pack("<i2", 1)
  function File:bigEndianEncoding() self._big = true; return self end
  function File:littleEndianEncoding() self._big = false; return self end
  function File:nativeEndianEncoding() self._big = not little_cpu; return self end
  function File:isBigEndianCPU() return not little_cpu end
  function File:isLittleEndianCPU() return little_cpu end
  -- writes are buffered until synchronize or close whatever this says
  function File:noBuffer() return self end

  -- ---- position ----
  function File:position() check_open(self, "position"); return self._pos + 1 end
  function File:seek(p)
    check_open(self, "seek")
    if math.type(p) ~= "integer" and not (type(p) == "number" and p == math.floor(p)) then
      error(("seek: argument 'position' must be an integer, got %s"):format(type(p)), 2)
    end
    if self._pipe then return fail(self, "seek", "cannot seek in a pipe") end
    if p < 1 or p > self._b:size() + 1 then
      return fail(self, "seek", ("unable to seek to position %d (the file has %d bytes)"):format(p, self._b:size()))
    end
    self._pos = math.tointeger(p) - 1
    return self
  end
  function File:seekEnd()
    check_open(self, "seekEnd")
    if self._pipe then return fail(self, "seekEnd", "cannot seek in a pipe") end
    self._pos = self._b:size()
    return self
  end
  function File:synchronize() check_open(self, "synchronize"); if self._flush then self:_flush() end; return self end
  function File:close()
    if self._closed then return true end
    if self._flush then self:_flush() end
    if self._finish then self:_finish() end
    self._closed = true
    self._b = nil
    return true
  end

  -- ---- typed reads and writes ----
  local function storage_tensor(s) return rawget(s, "_t") end
  local function stem_of_storage(s)
    local n = torch.typename(s)
    return n and n:match("^torch%.(%a+)Storage$")
  end

  for _, stem in ipairs(STEMS) do
    local rname, wname = "read" .. stem, "write" .. stem
    local sname = "torch." .. stem .. "Storage"
    -- readT() -> number; readT(n) -> a storage of the elements read; readT(storage) -> count
    File[rname] = function(self, arg)
      check_read(self, rname)
      local b = self._b
      if arg == nil then
        local v, np = b:decode1(self._pos, stem, codec(self))
        self._pos = np
        if v == nil then
          fail(self, rname, ("read error: read 0 blocks instead of 1 (at byte %d of %d)"):format(np + 1, b:size()))
          return 0
        end
        return v
      end
      if type(arg) == "number" then
        local t, np, got = b:decode(self._pos, stem, math.tointeger(arg) or arg, codec(self))
        self._pos = np
        if got < arg then fail(self, rname, ("read error: read %d blocks instead of %d"):format(got, arg)) end
        return t:storage()
      end
      if torch.isStorage(arg) and stem_of_storage(arg) == stem then
        local want = #arg
        local _, np, got = b:decode(self._pos, stem, storage_tensor(arg), codec(self))
        self._pos = np
        if got < want then fail(self, rname, ("read error: read %d blocks instead of %d"):format(got, want)) end
        return got
      end
      error(("%s: argument must be nothing, a count or a %s, got %s"):format(rname, sname, torch.type(arg)), 2)
    end
    -- writeT(number | table of numbers | storage) -> count written
    File[wname] = function(self, v)
      check_write(self, wname)
      local src
      if type(v) == "number" or (type(v) == "table" and not torch.isStorage(v) and not torch.isTensor(v)) then
        src = v
      elseif torch.isStorage(v) and stem_of_storage(v) == stem then
        src = storage_tensor(v)
      else
        error(("%s: argument must be a number, a table of numbers or a %s, got %s"):format(wname, sname, torch.type(v)), 2)
      end
      local np, n = self._b:encode(self._pos, stem, src, codec(self))
      self._pos = np
      return n
    end
  end
  function File:writeBool(v) return self:writeInt(v and 1 or 0) end
  function File:readBool() return self:readInt() == 1 end

  -- readString("*l" | "*a" | n)
  function File:readString(fmt)
    check_read(self, "readString")
    local b = self._b
    if type(fmt) == "number" then
      local s = b:read(self._pos, math.tointeger(fmt))
      self._pos = self._pos + #s
      if #s < fmt then fail(self, "readString", ("read error: read %d characters instead of %d"):format(#s, fmt)) end
      return s
    end
    if type(fmt) ~= "string" or not (fmt:sub(1, 2) == "*l" or fmt:sub(1, 2) == "*a") then
      error(("readString: argument 'format' must be \"*l\", \"*a\" or a count, got %s"):format(tostring(fmt)), 2)
    end
    if self._pos >= b:size() then
      fail(self, "readString", "read error: read 0 blocks instead of 1 (at the end of the file)")
      return ""
    end
    if fmt:sub(1, 2) == "*a" then
      local s = b:read(self._pos)
      self._pos = b:size()
      return s
    end
    local s, np = b:line(self._pos)
    self._pos = np
    return s
  end
  function File:writeString(s)
    check_write(self, "writeString")
    if type(s) ~= "string" then error(("writeString: argument must be a string, got %s"):format(type(s)), 2) end
    self._pos = self._b:write(self._pos, s)
    return #s
  end

  -- n raw characters as a Lua string (strings and class names in objects)
  local function read_chars(f, n, what)
    local b = f._b
    local s = b:read(f._pos, n)
    if #s < n then
      error(("readObject: the file is truncated (%s needs %d bytes at byte %d, %d left)"):format(
        what, n, f._pos + 1, #s), 0)
    end
    f._pos = f._pos + n
    if not f._binary and f._autospacing and n > 0 and b:read(f._pos, 1) == "\n" then f._pos = f._pos + 1 end
    return s
  end
  local function write_chars(f, s)
    local np = f._b:write(f._pos, s)
    if not f._binary and f._autospacing and #s > 0 then np = f._b:write(np, "\n") end
    f._pos = np
  end

  -- ---- objects ----
  local function env_of(f)
    local e = rawget(f, "_env")
    if not e then
      e = { wobj = {}, wkeep = {}, nw = 0, robj = {}, names = {}, force = false }
      rawset(f, "_env", e)
    end
    return e
  end
  function File:referenced(ref)
    env_of(self).force = not ref
    return self
  end
  function File:isReferenced() return not env_of(self).force end

  local function tensor_stem(t)
    local n = t:type():match("^torch%.(%a*)Tensor$") or ""
    n = n:gsub("^Cuda", "")
    if n == "" then n = "Float" end
    return is_stem[n] and n or nil, t:type()
  end

  local function metamethod(obj, name)
    local tn = torch.typename(obj)
    local mt = tn and torch.getmetatable(tn)
    if type(mt) ~= "table" then return nil end
    local ok, f = pcall(function() return mt["__" .. name] or mt[name] end)
    if ok and type(f) == "function" then return f end
    return nil
  end

  local function is_class_obj(v)
    local tn = torch.typename(v)
    return tn ~= nil and not torch.isTensor(v) and not torch.isStorage(v) and torch.factory(tn) ~= nil
  end

  local function writable(v)
    local tv = type(v)
    if v == nil then return T_NIL end
    if torch.isTensor(v) or torch.isStorage(v) or is_gen(v) or is_class_obj(v) then return T_TORCH end
    if tv == "table" then return T_TABLE end
    if tv == "number" then return T_NUMBER end
    if tv == "string" then return T_STRING end
    if tv == "boolean" then return T_BOOLEAN end
    return nil
  end

  local function stack_str(names) return table.concat(names, ".") end

  -- the reference key: the object itself, or its storage's identity for a storage
  local function ref_key(v)
    if torch.isStorage(v) then
      local t = storage_tensor(v)
      return ("%s:%d:%d:%s"):format(tostring(torch._t7storage_id(t)), t:storage_offset(), t:nElement(), torch.typename(v))
    end
    return v
  end

  local function write_tensor(f, t, hook)
    local stem, tname = tensor_stem(t)
    if not stem then
      error(("writeObject: a %s has no Torch7 file type (convert it: x:byte(), x:float()) at %s"):format(
        tname, stack_str(env_of(f).names)), 0)
    end
    if t:nElement() == 0 then
      -- Torch7's empty tensor: no dimensions and no storage
      f:writeInt(0)
      f:writeLong(1)
      f:writeObject(nil)
      return
    end
    local nd = t:dim()
    local sizes, strides = {}, {}
    if nd == 0 then
      sizes[1], strides[1] = 1, 1
      nd = 1
    else
      for i = 1, nd do sizes[i], strides[i] = t:size(i), t:stride(i) end
    end
    f:writeInt(nd)
    f:writeLong(sizes)
    f:writeLong(strides)
    f:writeLong(t:storage_offset() + 1)
    f:writeObject(t:storage(), nil, hook)
  end

  local function write_storage(f, s)
    local stem = stem_of_storage(s)
    local t = storage_tensor(s)
    f:writeLong(t:nElement())
    f:_write_data(stem, t)
  end
  function File:_write_data(stem, t)
    local np = self._b:encode(self._pos, stem, t, codec(self))
    self._pos = np
  end

  -- f is a method of obj's class or of one of its parents
  local function is_class_method(obj, f)
    local m = getmetatable(obj)
    while type(m) == "table" do
      for _, v in pairs(m) do if rawequal(v, f) then return true end end
      m = rawget(m, "__parent")
    end
    return false
  end

  function File:writeObject(object, debugname, hook)
    check_write(self, "writeObject")
    hook = hook or function(o) return o end
    local env = env_of(self)
    local names = env.names
    local top = #names == 0 and not env.writing
    if top then
      env.writing = true
      local ok, err = pcall(self.writeObject, self, object, debugname, hook)
      env.writing = false
      for i = #names, 1, -1 do names[i] = nil end
      if not ok then error(err, 2) end
      return
    end
    local sobject = object
    object = hook(object)
    if object == nil then
      self:writeInt(T_NIL)
      return
    end
    -- x:size() is a sequence that passes for a LongStorage (torch.type says so): it is
    -- written as one, so that Torch7 and the reader see a LongStorage
    if type(object) == "table" and not torch.isStorage(object) and torch.typename(object) == "torch.LongStorage" then
      object = torch.LongStorage(object:totable())
    end
    names[#names + 1] = debugname or "<?>"
    local tag = writable(object)
    if not tag then
      local what = type(object) == "function"
        and " (lutorch writes no functions: loading one would run code from the file)" or ""
      error(("writeObject: unwritable object <%s> at %s%s"):format(type(object), stack_str(names), what), 0)
    end
    self:writeInt(tag)
    if tag == T_NUMBER then
      self:writeDouble(object)
    elseif tag == T_BOOLEAN then
      self:writeBool(object)
    elseif tag == T_STRING then
      self:writeInt(#object)
      write_chars(self, object)
    else
      local key = ref_key(sobject)
      local index = env.wobj[key]
      if index and not env.force then
        self:writeInt(index)
      else
        index = env.nw + 1
        env.nw = index
        if not env.force then
          env.wobj[key] = index
          env.wkeep[#env.wkeep + 1] = object   -- kept alive while the file is open
        end
        self:writeInt(index)
        if tag == T_TABLE then
          local n = 0
          for _ in pairs(object) do n = n + 1 end
          self:writeInt(n)
          for k, v in pairs(object) do
            self:writeObject(k, nil, hook)
            local name = (type(k) == "string" or type(k) == "number") and tostring(k) or nil
            self:writeObject(v, name, hook)
          end
        else
          local cname
          if torch.isTensor(object) then
            local stem, tname = tensor_stem(object)
            cname = stem and ("torch." .. stem .. "Tensor") or tname
          elseif is_gen(object) then cname = "torch.Generator"
          else cname = torch.typename(object) end
          local version = "V " .. tostring(torch.isTensor(object) and 1 or torch.version(object))
          self:writeInt(#version)
          write_chars(self, version)
          self:writeInt(#cname)
          write_chars(self, cname)
          if torch.isTensor(object) then
            write_tensor(self, object, hook)
          elseif torch.isStorage(object) then
            write_storage(self, object)
          elseif is_gen(object) then
            -- the generator's state bytes, as Torch7 wrote its generator raw
            self:_write_data("Byte", object:get_state())
          else
            local w = metamethod(object, "write")
            if w then
              w(object, self)
            else
              local var = {}
              for k, v in pairs(object) do
                if writable(v) then
                  var[k] = v
                elseif type(v) == "function" and is_class_method(object, v) then
                  -- one of the class's own methods set on the instance (nn's share() sets
                  -- accUpdateGradParameters so): the copy read back has the class's methods
                else
                  print(("$ Warning: cannot write object field <%s> of <%s> %s"):format(
                    tostring(k), cname, stack_str(names)))
                end
              end
              self:writeObject(var, cname, hook)
            end
          end
        end
      end
    end
    names[#names] = nil
  end

  local gen_state_size, t7map
  local function read_typed(f, stem, n, what)
    local t, np, got = f._b:decode(f._pos, stem, n, codec(f))
    f._pos = np
    if got < n then
      error(("readObject: the file is truncated or corrupt (%s: read %d of %d elements, at byte %d)"):format(
        what, got, n, np + 1), 0)
    end
    return t
  end
  local function read_int(f, what)
    local v, np = f._b:decode1(f._pos, "Int", codec(f))
    if v == nil then
      error(("readObject: the file is truncated or not a Torch7 file (%s at byte %d)"):format(what, f._pos + 1), 0)
    end
    f._pos = np
    return v
  end
  local function read_long(f, what)
    local v, np = f._b:decode1(f._pos, "Long", codec(f))
    if v == nil then error(("readObject: the file is truncated or corrupt (%s at byte %d)"):format(what, f._pos + 1), 0) end
    f._pos = np
    return v
  end

  local function read_tensor(f, stem, cname)
    local nd = read_int(f, "a tensor's dimension count")
    if nd < 0 or nd > 16 then error(("readObject: a %s with %d dimensions"):format(cname, nd), 0) end
    local sizes, strides = {}, {}
    if nd > 0 then
      sizes = read_typed(f, "Long", nd, "a tensor's sizes"):totable()
      strides = read_typed(f, "Long", nd, "a tensor's strides"):totable()
    end
    local offset = read_long(f, "a tensor's offset")
    local s = f:readObject()
    if s ~= nil and (not torch.isStorage(s) or stem_of_storage(s) ~= stem) then
      error(("readObject: a %s over a %s"):format(cname, torch.type(s)), 0)
    end
    local empty = nd == 0 or s == nil
    for i = 1, nd do if sizes[i] == 0 then empty = true end end
    if empty then
      if nd == 0 or s == nil then return torch[stem .. "Tensor"]() end
      return torch[stem .. "Tensor"](table.unpack(sizes))
    end
    return torch._t7view(storage_tensor(s), offset - 1, sizes, strides)
  end

  function File:readObject()
    check_read(self, "readObject")
    local env = env_of(self)
    local at = self._pos + 1
    local tag = read_int(self, "a type tag")
    if tag == T_NIL then return nil end
    if tag == T_NUMBER then
      local v, np = self._b:decode1(self._pos, "Double", codec(self))
      if v == nil then error(("readObject: the file is truncated (a number at byte %d)"):format(self._pos + 1), 0) end
      self._pos = np
      -- Torch7 numbers are doubles; whole ones come back as integers (as torch.load_t7 does)
      if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return math.tointeger(v) end
      return v
    end
    if tag == T_BOOLEAN then return read_int(self, "a boolean") == 1 end
    if tag == T_STRING then
      local n = read_int(self, "a string length")
      if n < 0 then error(("readObject: a string of negative length at byte %d"):format(at), 0) end
      return read_chars(self, n, "a string")
    end
    if tag == T_FUNCTION or tag == T_RECUR or tag == T_LEGACY_RECUR then
      error(("readObject: the file holds a Lua function (byte %d); lutorch never loads code from a file"):format(at), 0)
    end
    if tag ~= T_TABLE and tag ~= T_TORCH then
      error(("readObject: not a Torch7 object (unknown type tag %s at byte %d)"):format(tostring(tag), at), 0)
    end
    local index = read_int(self, "a reference index")
    local objs = env.robj
    if objs[index] ~= nil and not env.force then return objs[index] end
    if tag == T_TABLE then
      local n = read_int(self, "a table size")
      if n < 0 then error(("readObject: a table of %d entries at byte %d"):format(n, at), 0) end
      local t = {}
      if not env.force then objs[index] = t end
      for _ = 1, n do
        local k = self:readObject()
        local v = self:readObject()
        if k == nil then error(("readObject: a table key is nil (table at byte %d)"):format(at), 0) end
        t[k] = v
      end
      return t
    end
    local version = read_chars(self, read_int(self, "a class version"), "a class version")
    local vnum = tonumber(version:match("^V (.*)$"))
    local cname
    if vnum then cname = read_chars(self, read_int(self, "a class name"), "a class name")
    else cname, vnum = version, 0 end
    local obj
    local tstem = cname:match("^torch%.(%a*)Tensor$")
    local sstem = cname:match("^torch%.(%a*)Storage$")
    if tstem == "Cuda" then tstem = "Float" elseif tstem then tstem = tstem:gsub("^Cuda", "") end
    if sstem == "Cuda" then sstem = "Float" elseif sstem then sstem = sstem:gsub("^Cuda", "") end
    if tstem and is_stem[tstem] then
      obj = read_tensor(self, tstem, cname)
    elseif sstem and is_stem[sstem] then
      local n = read_long(self, "a storage size")
      if n < 0 or n > self._b:size() then
        error(("readObject: the file is truncated or corrupt (a storage of %d elements at byte %d)"):format(n, at), 0)
      end
      local st = torch[sstem .. "Storage"]()
      rawset(st, "_t", read_typed(self, sstem, n, "a storage's data"))
      obj = st
    elseif cname == "torch.Generator" then
      gen_state_size = gen_state_size or torch.Generator():get_state():nElement()
      obj = torch.Generator()
      obj:set_state(read_typed(self, "Byte", gen_state_size, "a generator's state"))
    else
      local make = torch.factory(cname)
      if not make and cname:match("^nn%.") then
        -- Torch7 mode's nn (lib/t7nn) has Torch7's classes: load it, as a script would
        require "nn"
        make = torch.factory(cname)
      end
      if not make then
        -- other nn classes become lutorch modules, as torch.load_t7 makes them
        t7map = t7map or torch._t7map()
        if not t7map.classes[cname] then error(("readObject: unknown Torch class <%s>"):format(cname), 0) end
        local fields = self:readObject()
        if type(fields) == "table" then
          for k, v in pairs(fields) do if torch.isStorage(v) then fields[k] = storage_tensor(v) end end
        end
        obj = t7map.build(cname, fields)
        if not env.force then objs[index] = obj end
        return obj
      end
      obj = make(self)
      if not env.force then objs[index] = obj end
      local r = metamethod(obj, "read")
      if r then
        r(obj, self, vnum)
      else
        local var = self:readObject()
        if type(var) == "table" then for k, v in pairs(var) do obj[k] = v end end
      end
      return obj
    end
    if not env.force then objs[index] = obj end
    return obj
  end

  ---------------------------------------------------------------------------
  -- the three kinds of file
  ---------------------------------------------------------------------------
  local function check_mode(op, mode, allowed)
    mode = mode or "r"
    if type(mode) ~= "string" or not allowed[mode] then
      local list = {}
      for k in pairs(allowed) do list[#list + 1] = '"' .. k .. '"' end
      table.sort(list)
      error(("%s: argument 'mode' must be %s, got %s"):format(op, table.concat(list, " or "), tostring(mode)), 3)
    end
    return mode
  end
  local function finalizer(cls)
    rawset(torch.getmetatable(cls), "__gc", function(f) if not rawget(f, "_closed") and rawget(f, "_b") then pcall(File.close, f) end end)
    rawset(torch.getmetatable(cls), "__tostring", function(f)
      return ("%s%s (%s, %s)"):format(cls, rawget(f, "_name") and (" '" .. f._name .. "'") or "",
        f._closed and "closed" or (f._binary and "binary" or "ascii"),
        f._closed and "" or ((f._readable and "r" or "") .. (f._writable and "w" or "")))
    end)
  end

  -- torch.DiskFile(path [, mode "r" | "w" | "rw"] [, quiet])
  local DiskFile = torch.class("torch.DiskFile", "torch.File", torch)
  function DiskFile:__init(path, mode, quiet)
    if type(path) ~= "string" then error(("DiskFile: argument 'name' must be a string, got %s"):format(type(path)), 3) end
    mode = check_mode("DiskFile", mode, { r = true, w = true, rw = true })
    local bytes
    if mode == "w" then
      local h, err = io.open(path, "wb")
      if not h then return nil, ("DiskFile: cannot open <%s> in mode w (%s)"):format(path, err) end
      h:close()
      bytes = torch._t7bytes()
    else
      bytes = torch._t7bytes_load(path)
      if not bytes then
        if mode == "r" then return nil, ("DiskFile: cannot open <%s> in mode r"):format(path) end
        local h, err = io.open(path, "wb")
        if not h then return nil, ("DiskFile: cannot open <%s> in mode rw (%s)"):format(path, err) end
        h:close()
        bytes = torch._t7bytes()
      end
    end
    init(self, bytes, mode ~= "w", mode ~= "r")
    self._name = path
    if quiet then self._quiet = true end
    return self
  end
  function DiskFile:_flush()
    if not self._writable then return end
    local ok, err = self._b:save(self._name)
    if not ok then fail(self, "synchronize", err) end
  end
  function DiskFile:name() return self._name end
  finalizer("torch.DiskFile")

  -- torch.MemoryFile([storage | mode]): the bytes of a CharStorage (its
  -- trailing '\0', as Torch7's MemoryFile:storage() gives, is not content)
  local MemoryFile = torch.class("torch.MemoryFile", "torch.File", torch)
  function MemoryFile:__init(a, mode)
    local bytes
    if torch.isStorage(a) then
      local st = stem_of_storage(a)
      if st ~= "Char" and st ~= "Byte" then
        error(("MemoryFile: argument 'storage' must be a torch.CharStorage, got %s"):format(torch.type(a)), 3)
      end
      local t = storage_tensor(a)
      local n = t:nElement()
      if n > 0 and t[n] == 0 then t = t:narrow(1, 1, n - 1) end
      bytes = torch._t7bytes(t)
      mode = check_mode("MemoryFile", mode or "rw", { r = true, w = true, rw = true })
    else
      mode = check_mode("MemoryFile", a or "rw", { r = true, w = true, rw = true })
      bytes = torch._t7bytes()
    end
    init(self, bytes, mode ~= "w", mode ~= "r")
    return self
  end
  -- the contents as a CharStorage, with Torch7's trailing '\0'
  function MemoryFile:storage()
    check_open(self, "storage")
    local t = self._b:tensor("Char")
    local n = t:nElement()
    local s = torch.CharStorage(n + 1)
    if n > 0 then storage_tensor(s):narrow(1, 1, n):copy(t) end
    storage_tensor(s)[n + 1] = 0
    return s
  end
  function MemoryFile:_string() return self._b:read(0) end
  finalizer("torch.MemoryFile")

  -- torch.PipeFile(command [, mode "r" | "w"] [, quiet]): "r" reads the
  -- command's output (run to its end when the file is opened), "w" feeds its input
  local PipeFile = torch.class("torch.PipeFile", "torch.DiskFile", torch)
  function PipeFile:__init(cmd, mode, quiet)
    if type(cmd) ~= "string" then error(("PipeFile: argument 'command' must be a string, got %s"):format(type(cmd)), 3) end
    mode = check_mode("PipeFile", mode, { r = true, w = true })
    local h, err = io.popen(cmd, mode)
    if not h then return nil, ("PipeFile: cannot run <%s> (%s)"):format(cmd, tostring(err)) end
    local bytes
    if mode == "r" then
      bytes = torch._t7bytes(h:read("a") or "")
      h:close()
    else
      bytes = torch._t7bytes()
      self._h = h
      self._sent = 0
    end
    init(self, bytes, mode == "r", mode == "w")
    self._name, self._pipe = cmd, true
    if quiet then self._quiet = true end
    return self
  end
  function PipeFile:_flush()
    if not self._h then return end
    local s = self._b:read(self._sent)
    if #s > 0 then
      self._h:write(s)
      self._h:flush()
      self._sent = self._sent + #s
    end
  end
  function PipeFile:_finish()
    if self._h then self._h:close(); self._h = nil end
  end
  finalizer("torch.PipeFile")

  -- constructors that give nil on a file that cannot be opened in quiet mode
  -- (as Torch7's did), and an error naming the file otherwise
  for _, cname in ipairs({ "DiskFile", "PipeFile", "MemoryFile" }) do
    local cls = torch[cname]
    local cmt = getmetatable(cls)
    local imt = torch.getmetatable("torch." .. cname)
    cmt.__call = function(_, a, b, quiet)
      local obj = setmetatable({}, imt)
      local r, err = obj:__init(a, b, quiet)
      if r == nil and err then
        if quiet then return nil end
        error(err, 2)
      end
      return obj
    end
  end

  ---------------------------------------------------------------------------
  -- serialization helpers
  ---------------------------------------------------------------------------
  local function check_smode(op, mode)
    if mode ~= nil and mode ~= "binary" and mode ~= "ascii" then
      error(('%s: argument \'mode\' must be "binary" or "ascii", got %s'):format(op, tostring(mode)), 3)
    end
    return mode or "binary"
  end

  -- a MemoryFile holding object, written in mode
  local function written(object, mode)
    local f = torch.MemoryFile()
    f[mode](f)
    f:writeObject(object)
    return f
  end
  -- the object read from bytes (a string or a Char tensor), in mode
  local function read_back(bytes, mode)
    local f = setmetatable({}, torch.getmetatable("torch.MemoryFile"))
    init(f, torch._t7bytes(bytes), true, false)
    f[mode](f)
    local obj = f:readObject()
    f:close()
    return obj
  end

  function torch.serializeToStorage(object, mode)
    local f = written(object, check_smode("serializeToStorage", mode))
    local t = f._b:tensor("Char")
    f:close()
    return t:storage()
  end
  function torch.serialize(object, mode)
    local f = written(object, check_smode("serialize", mode))
    local s = f:_string()
    f:close()
    return s
  end
  function torch.deserializeFromStorage(storage, mode)
    mode = check_smode("deserializeFromStorage", mode)
    if not torch.isStorage(storage) then
      error(("deserializeFromStorage: argument 'storage' must be a torch.CharStorage, got %s"):format(torch.type(storage)), 2)
    end
    return read_back(storage_tensor(storage), mode)
  end
  function torch.deserialize(str, mode)
    mode = check_smode("deserialize", mode)
    if type(str) ~= "string" then error(("deserialize: argument 'str' must be a string, got %s"):format(type(str)), 2) end
    return read_back(str, mode)
  end

  -- torch.save / torch.load write and read Torch7 files in this mode. A file
  -- in lutorch's own format still loads (torch.load tells them apart).
  local load0 = torch.load
  function torch.save(path, object, mode, referenced)
    if type(path) ~= "string" then error(("save: argument 'filename' must be a string, got %s"):format(type(path)), 2) end
    mode = check_smode("save", mode)
    if referenced ~= nil and type(referenced) ~= "boolean" then
      error("save: argument 'referenced' must be true or false", 2)
    end
    -- written in memory, then to disk in one atomic step: an object that cannot
    -- be written leaves an older file at path as it was
    local f = torch.MemoryFile()
    f[mode](f)
    f:referenced(referenced ~= false)
    local ok, err = pcall(f.writeObject, f, object)
    if ok then
      ok, err = f._b:save(path, true)
      if not ok then err = "save: " .. err end
    end
    f:close()
    if not ok then error(err, 2) end
  end
  function torch.load(path, mode, referenced)
    if type(path) ~= "string" then error(("load: argument 'filename' must be a string, got %s"):format(type(path)), 2) end
    if mode ~= nil and mode ~= "binary" and mode ~= "ascii" and mode ~= "b32" and mode ~= "b64" then
      error(('load: argument \'mode\' must be "binary", "ascii", "b32" or "b64", got %s'):format(tostring(mode)), 2)
    end
    if referenced ~= nil and type(referenced) ~= "boolean" then
      error("load: argument 'referenced' must be true or false", 2)
    end
    local f = torch.DiskFile(path, "r")
    local head = f._b:read(0, 64)
    if torch.serialization and torch.serialization._is_ours and torch.serialization._is_ours(head) then
      f:close()
      return load0(path)
    end
    if mode == nil then
      -- Torch7 files start with a type tag: 4 bytes in binary, a digit in ascii
      mode = head:match("^%s*%-?%d") and "ascii" or "binary"
    end
    if mode == "b32" or mode == "b64" then
      f:longSize(mode == "b32" and 4 or 8)
      mode = "binary"
    end
    f[mode](f)
    f:referenced(referenced ~= false)
    local ok, obj = pcall(f.readObject, f)
    f:close()
    if not ok then error(("load: '%s': %s"):format(path, tostring(obj)), 2) end
    return obj
  end
  torch.saveobj, torch.loadobj = torch.save, torch.load
end
