-- gpt_model.lua — a nanoGPT-style decoder (Karpathy's model.py, without dropout) for
-- bench/compile_bench.lua: pre-norm blocks of causal self-attention and a GELU MLP, tied
-- embeddings not used (a separate head). The causal mask is additive (0 / -inf), the same
-- function as model.py's masked_fill; bench/compile_bench.py builds the same model in PyTorch.
local nn = require "nn"
local F = nn.functional

local Attention = nn.Module:extend("GPTAttention")
function Attention:__init(c)
  self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd)
  self.c_proj = nn.Linear(c.n_embd, c.n_embd)
  self.n_head, self.n_embd = c.n_head, c.n_embd
  local mask = torch.zeros(c.block_size, c.block_size)
  for i = 1, c.block_size do for j = i + 1, c.block_size do mask[i][j] = -math.huge end end
  self.mask = mask
end
function Attention:forward(x)
  local B, T, C = x.shape[1], x.shape[2], x.shape[3]
  local H = self.n_head
  local qkv = self.c_attn(x)
  local q, k, v = table.unpack(qkv:split(C, 3))
  q = q:reshape(B, T, H, C // H):transpose(2, 3)
  k = k:reshape(B, T, H, C // H):transpose(2, 3)
  v = v:reshape(B, T, H, C // H):transpose(2, 3)
  local mask = self.mask:narrow(1, 1, T):narrow(2, 1, T)
  local att = F.softmax(torch.matmul(q, k:transpose(3, 4)) * (1 / math.sqrt(C // H)) + mask, -1)
  local y = torch.matmul(att, v):transpose(2, 3):reshape(B, T, C)
  return self.c_proj(y)
end

local Block = nn.Module:extend("GPTBlock")
function Block:__init(c)
  self.ln_1 = nn.LayerNorm(c.n_embd)
  self.attn = Attention(c)
  self.ln_2 = nn.LayerNorm(c.n_embd)
  self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd)
  self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd)
end
function Block:forward(x)
  x = x + self.attn(self.ln_1(x))
  return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))
end

local GPT = nn.Module:extend("GPT")
function GPT:__init(c)
  self.wte = nn.Embedding(c.vocab_size, c.n_embd)
  self.wpe = nn.Embedding(c.block_size, c.n_embd)
  self.h = nn.ModuleList()
  for _ = 1, c.n_layer do self.h:append(Block(c)) end
  self.ln_f = nn.LayerNorm(c.n_embd)
  self.lm_head = nn.Linear(c.n_embd, c.vocab_size, { bias = false })
end
-- idx, targets: [B, T] token numbers (1-based); returns the mean cross-entropy
function GPT:forward(idx, targets)
  local T = idx.shape[2]
  local pos = torch.arange(1, T + 1, { dtype = torch.int64 })
  local x = self.wte(idx) + self.wpe(pos)
  for i = 1, #self.h do x = self.h[i](x) end
  local logits = self.lm_head(self.ln_f(x))
  return F.cross_entropy(logits:reshape(-1, logits.shape[3]), targets:reshape(-1))
end

return GPT
