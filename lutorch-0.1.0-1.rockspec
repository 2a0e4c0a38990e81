-- lutorch-0.1.0-1.rockspec — the torch module (torch.so) and the Lua libraries
-- (nn, optim, data, distributed) for a stock Lua 5.4, through luarocks.
--   luarocks make lutorch-0.1.0-1.rockspec          (from a checkout)
-- The `lutorch` program, liblutorch, the header and the man pages come with
-- `make install` instead (see lutorch(3)). Building needs the Debian packages
-- listed as DEPS_PKGS in the Makefile (`make deps` installs them).
rockspec_format = "3.0"
package = "lutorch"
version = "0.1.0-1"
source = {
  -- a release archive of the source tree; `luarocks make` in a checkout needs none
  url = "file://lutorch-0.1.0.tar.gz",
  dir = "lutorch-0.1.0",
}
description = {
  summary = "Tensors, autograd, nn, optim and data loaders for Lua 5.4",
  detailed = [[
lutorch is a tensor language for Lua 5.4: Torch7's idea (Lua with tensors as
first-class values) rebuilt around PyTorch's internals — a dispatcher, a
tape-based autograd engine, nn modules, optimizers and data loaders — in C.
This rock installs the `torch` C module and the Lua libraries nn, optim, data
and distributed, so `require "torch"` works from any Lua 5.4.
]],
  license = "MIT",
  labels = { "tensor", "autograd", "deep-learning", "torch" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
-- (Debian keeps cblas.h in an openblas-specific folder, so only the libraries are checked;
-- the Makefile takes the compiler flags from pkg-config)
external_dependencies = {
  OPENBLAS = { library = "openblas" },
  JANSSON = { library = "jansson" },
  LIBZIP = { library = "zip" },
  ZLIB = { library = "z" },
  LIBPNG = { library = "png16" },
  LIBJPEG = { library = "jpeg" },
}
build = {
  type = "make",
  -- the Makefile finds its dependencies with pkg-config; build only torch.so
  build_target = "lua-module",
  install_target = "install-lua",
  build_variables = {},
  install_variables = {
    LUA_LMOD = "$(LUADIR)",
    LUA_CMOD = "$(LIBDIR)",
  },
  copy_directories = { "man" },
}
