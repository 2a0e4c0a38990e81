-- model.lua — the model examples/embed/embed.c runs: a small classifier with
-- fixed weights (the same numbers everywhere, no weight file needed). A real
-- application would build the model and torch.load its trained weights.
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
for i, p in ipairs(model:parameters()) do
  p.data:copy_(torch.linspace(-1, 1, p:numel()):reshape(p.shape) * (0.5 / i))
end
model:evaluate()

-- class probabilities for a batch of rows, without recording a graph
function predict(x)
  return torch.no_grad(function() return model(x):softmax(-1) end)
end
