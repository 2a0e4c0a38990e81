-- image/util.lua — what the parts of the image library share: argument checks that name the
-- function, dtype names (Torch7's 'byte', 'float', 'double' too), the conversion of an image to
-- a float batch and back, and the file reads and writes (lib/image/init.lua is the overview).
local torch = torch or require("torch")
local U = {}

local function fail(fname, fmt, ...) error(fname .. ": " .. fmt:format(...), 0) end

-- Torch7's tensor type strings, and dtype names
local T7_TYPES = { byte = "uint8", float = "float32", double = "float64" }
local LOADABLE = { uint8 = true, int32 = true, int64 = true, float16 = true, bfloat16 = true, float32 = true,
                   float64 = true }

local function is_dtype(v) return type(v) == "table" and v.is_floating_point ~= nil and v.name ~= nil end

-- a dtype from a dtype value, a dtype name or a Torch7 type string
local function to_dtype(fname, v, argname)
  if is_dtype(v) then return v end
  if type(v) == "string" then
    local name = T7_TYPES[v] or v:gsub("^torch%.", "")
    local dt = rawget(torch, name)
    if is_dtype(dt) then return dt end
  end
  fail(fname, "argument '%s' must be a dtype (torch.uint8, torch.float32, ...) or 'byte', 'float', 'double'; got %s",
    argname, tostring(v))
end

local function check_tensor(fname, x, argname)
  if not torch.is_tensor(x) then
    fail(fname, "argument '%s' must be a tensor, got %s", argname or "input", type(x))
  end
  return x
end

-- an image tensor: [H, W] or [C, H, W] (with `batch`, also [N, C, H, W])
local function check_image(fname, x, argname, batch)
  check_tensor(fname, x, argname)
  local d = x:dim()
  if d < 2 or d > (batch and 4 or 3) then
    fail(fname, "argument '%s' must be an image [C, H, W] or [H, W]%s, got a %d-D tensor of shape %s",
      argname or "input", batch and " or a batch [N, C, H, W]" or "", d, tostring(x.shape))
  end
  if x.dtype.is_complex or x.dtype == torch.bool then
    fail(fname, "argument '%s' has dtype %s; images are real numbers", argname or "input", x.dtype.name)
  end
  return x
end

-- x as a 4-D float batch, and a function that gives a result of the batch back x's shape
-- and dtype (integer dtypes rounded and clamped to their range, as torchvision does)
local function as_batch(x)
  local d, dt = x:dim(), x.dtype
  local fdt = dt.is_floating_point and dt or torch.float32
  if dt == torch.float16 or dt == torch.bfloat16 then fdt = torch.float32 end
  local b = x:to(fdt)
  if d == 2 then b = b:reshape(1, 1, x:size(1), x:size(2))
  elseif d == 3 then b = b:unsqueeze(1) end
  local function back(y)
    if d == 2 then y = y:reshape(y:size(3), y:size(4))
    elseif d == 3 then y = y:squeeze(1) end
    if not dt.is_floating_point then
      local lo, hi = 0, 255
      if dt == torch.int8 then lo, hi = -128, 127 elseif dt ~= torch.uint8 then lo, hi = nil, nil end
      y = y:round()
      if lo then y = y:clamp(lo, hi) end
    end
    return y:to(dt):contiguous()
  end
  return b, back
end

local function positive_int(v) return math.type(v) == "integer" and v > 0 end

local function read_all(fname, path)
  if type(path) ~= "string" then fail(fname, "argument 'path' must be a file name, got %s", type(path)) end
  local f, err = io.open(path, "rb")
  if not f then fail(fname, "cannot open '%s': %s", path, (err or "?"):gsub("^[^:]*: ", "")) end
  local bytes = f:read("a")
  f:close()
  if not bytes then fail(fname, "cannot read '%s'", path) end
  return bytes
end

-- x as a contiguous uint8 [C, H, W]: floating images are clamped to [0, 1], scaled and rounded
local function to_uint8(fname, x, argname)
  check_image(fname, x, argname)
  if x:dim() == 2 then x = x:unsqueeze(1) end
  local c = x:size(1)
  if c < 1 or c > 4 then
    fail(fname, "argument '%s' must have 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) channels, got %d " ..
      "(shape %s; images are [C, H, W])", argname or "input", c, tostring(x.shape))
  end
  if x.device.type ~= "cpu" then x = x:cpu() end
  local dt = x.dtype
  if dt == torch.uint8 then return x:contiguous() end
  if not dt.is_floating_point then
    fail(fname, "argument '%s' has dtype %s: save uint8 (0..255) or floating ([0, 1]) images", argname or "input",
      dt.name)
  end
  -- x * 255 rounded half up, as torchvision's save_image (add 0.5, truncate)
  return x:to(torch.float32):clamp(0, 1):mul(255):add(0.5):floor():to(torch.uint8):contiguous()
end

local function write_all(fname, path, bytes)
  if type(path) ~= "string" then fail(fname, "argument 'path' must be a file name, got %s", type(path)) end
  local f, err = io.open(path, "wb")
  if not f then fail(fname, "cannot write '%s': %s", path, (err or "?"):gsub("^[^:]*: ", "")) end
  local ok, werr = f:write(bytes)
  local cok, cerr = f:close()
  if not ok or not cok then fail(fname, "cannot write '%s': %s", path, tostring(werr or cerr)) end
end

U.fail = fail
U.T7_TYPES = T7_TYPES
U.LOADABLE = LOADABLE
U.is_dtype = is_dtype
U.to_dtype = to_dtype
U.check_tensor = check_tensor
U.check_image = check_image
U.as_batch = as_batch
U.positive_int = positive_int
U.read_all = read_all
U.to_uint8 = to_uint8
U.write_all = write_all
return U
