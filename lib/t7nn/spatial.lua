-- t7nn/spatial.lua — 2-D modules over (C x H x W) inputs or batches (N x C x H x W):
-- padding, ...
local torch = require "torch"
local nn = require "t7nn.env"

-- nn.SpatialZeroPadding(left [, right, top, bottom]): zeros added around the last two
-- dims (negative values crop)
local SpatialZeroPadding, parent = torch.class("nn.SpatialZeroPadding", "nn.Module")

function SpatialZeroPadding:__init(l, r, t, b)
  parent.__init(self)
  self.pad_l = l
  self.pad_r = r or l
  self.pad_t = t or l
  self.pad_b = b or l
end

function SpatialZeroPadding:updateOutput(input)
  local d = input:dim()
  if d ~= 3 and d ~= 4 then error("nn.SpatialZeroPadding: input must be 3-D or 4-D", 2) end
  self.output:set(torch.pad(input, { self.pad_l, self.pad_r, self.pad_t, self.pad_b }))
  return self.output
end

function SpatialZeroPadding:updateGradInput(input, gradOutput)
  local h, w = input:dim() - 1, input:dim()
  local g = gradOutput
  -- the part of gradOutput over the input (negative padding: zeros where it cropped)
  local gi = input.new():resizeAs(input):zero()
  local src_h0, dst_h0 = math.max(self.pad_t, 0), math.max(-self.pad_t, 0)
  local src_w0, dst_w0 = math.max(self.pad_l, 0), math.max(-self.pad_l, 0)
  local nh = math.min(input:size(h) - dst_h0, g:size(h) - src_h0)
  local nw = math.min(input:size(w) - dst_w0, g:size(w) - src_w0)
  if nh > 0 and nw > 0 then
    gi:narrow(h, dst_h0 + 1, nh):narrow(w, dst_w0 + 1, nw)
      :copy(g:narrow(h, src_h0 + 1, nh):narrow(w, src_w0 + 1, nw))
  end
  self.gradInput = gi
  return self.gradInput
end

function SpatialZeroPadding:__tostring__()
  return ("%s(l=%d, r=%d, t=%d, b=%d)"):format(torch.type(self), self.pad_l, self.pad_r, self.pad_t, self.pad_b)
end

return nn
