-- Open a kernel file in headless Neovim with inlay hints on, open a recorded line profile through
-- the server's command, and read the stall hints Neovim shows and the hover of the hottest line;
-- results -> JSON.
-- env: PROBE_PY (python), PROBE_FILE (.py to open), PROBE_OUT (json path), PROBE_PROFILE (the report),
--      PROBE_HOT (0-based line of the hottest line)
local probe = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'nvim_probe.lua'))
local out = { steps = {} }
local function step(name, value) out.steps[name] = value end

local function label_of(hint)
  local label = hint.label
  if type(label) == 'table' then
    local parts = {}
    for _, part in ipairs(label) do parts[#parts + 1] = part.value end
    label = table.concat(parts)
  end
  return label
end

-- The stall hints Neovim holds for the buffer ("41% · ..."), as {line (0-based), label}.
local function stall_hints(buf)
  local seen = {}
  for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local label = label_of(item.inlay_hint)
    if label:find('·', 1, true) then
      seen[#seen + 1] = { item.inlay_hint.position.line, label }
    end
  end
  table.sort(seen, function(a, b) return a[1] < b[1] end)
  return seen
end

local function main()
  local buf, client_id = probe.open_with_server()
  vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  local client = vim.lsp.get_client_by_id(client_id)
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  local reply = client:request_sync('workspace/executeCommand', {
    command = 'tritonlens.server.openProfile',
    arguments = { vim.uri_from_bufnr(buf), os.getenv('PROBE_PROFILE') },
  }, 20000, buf)
  step('opened', reply and reply.result or { error = reply and reply.err })
  local shown = vim.wait(20000, function() return #stall_hints(buf) > 0 end, 100)
  step('hints', stall_hints(buf))
  if not shown then error('no stall hint shown') end
  local hot = tonumber(os.getenv('PROBE_HOT'))
  local hover = client:request_sync('textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = hot, character = 6 },
  }, 20000, buf)
  local contents = hover and hover.result and hover.result.contents
  step('hover', contents and (contents.value or contents) or vim.NIL)
end

probe.run(out, main)
