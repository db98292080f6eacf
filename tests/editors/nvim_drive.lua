-- Drive the tritonlens language server from headless Neovim, as a user would; results -> JSON.
-- env: PROBE_PY (python), PROBE_FILE (.py to open), PROBE_OUT (json path),
--      PROBE_CODE (diagnostic code to act on), PROBE_ACTION (title prefix of the action to apply),
--      PROBE_HOVER (text whose first occurrence the cursor hovers)
local v = vim.version()
local probe = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'nvim_probe.lua'))
local out = { nvim = v.major .. '.' .. v.minor .. '.' .. v.patch, steps = {} }
local function step(name, value) out.steps[name] = value end
local code = os.getenv('PROBE_CODE')

local function lsp_diag(d)
  return (d.user_data and d.user_data.lsp) or {}
end

local function ours(buf)
  return vim.tbl_filter(function(d) return d.code == code or lsp_diag(d).code == code end, vim.diagnostic.get(buf))
end

local function main()
  local buf, client_id = probe.open_with_server()
  step('client_id', client_id)

  -- 1. diagnostics arrive after didOpen (pushed or pulled: Neovim decides from the capabilities)
  local got = vim.wait(20000, function() return #ours(buf) > 0 end, 50)
  step('diagnostics', vim.tbl_map(function(d)
    return { lnum = d.lnum, col = d.col, message = d.message, source = d.source, code = d.code or lsp_diag(d).code }
  end, vim.diagnostic.get(buf)))
  if not got then error('no ' .. code .. ' diagnostic within 20s') end
  local client = vim.lsp.get_client_by_id(client_id)
  local enc = client.offset_encoding or 'utf-16'
  step('offset_encoding', enc)
  step('pull', client.server_capabilities.diagnosticProvider ~= nil)

  -- 2. hover on the kernel name
  local hover_text = os.getenv('PROBE_HOVER')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i, line in ipairs(lines) do
    local s = line:find(hover_text, 1, true)
    if s then vim.api.nvim_win_set_cursor(0, { i, s }); break end
  end
  local pparams = vim.lsp.util.make_position_params(0, enc)
  local hres = vim.lsp.buf_request_sync(buf, 'textDocument/hover', pparams, 10000)
  local h = hres and hres[client_id] and hres[client_id].result
  step('hover', h and h.contents and h.contents.value)

  -- 3. code actions for the diagnostic, with its LSP form (data included) in the context
  local d = ours(buf)[1]
  local lspd = lsp_diag(d)
  local caparams = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = lspd.range,
    context = { diagnostics = { lspd } },
  }
  local cres = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', caparams, 10000)
  local actions = (cres and cres[client_id] and cres[client_id].result) or {}
  step('code_actions', vim.tbl_map(function(a) return a.title end, actions))
  local prefix = os.getenv('PROBE_ACTION')
  local action
  for _, a in ipairs(actions) do
    if a.title:sub(1, #prefix) == prefix then action = a; break end
  end
  if not action then error('no code action starting with ' .. prefix) end

  -- 4. resolve the edit when the server deferred it, apply, save, re-read from disk
  if not action.edit then
    local rres = vim.lsp.buf_request_sync(buf, 'codeAction/resolve', action, 10000)
    local r = rres and rres[client_id]
    if not r or r.err then error('codeAction/resolve failed: ' .. vim.inspect(r and r.err)) end
    action = r.result
    step('resolved', true)
  end
  vim.lsp.util.apply_workspace_edit(action.edit, enc)
  vim.cmd('silent write')
  step('file_after', table.concat(vim.fn.readfile(os.getenv('PROBE_FILE')), '\n') .. '\n')
  -- the server re-analyzes the new text: the diagnostic goes away
  step('diags_cleared', vim.wait(10000, function() return #ours(buf) == 0 end, 50))
end

probe.run(out, main)
