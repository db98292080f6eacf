-- Open a kernel file in headless Neovim and wait, without editing, until the compile-backed
-- finding PROBE_CODE shows; results -> JSON.
-- env: PROBE_PY (python), PROBE_FILE (.py to open), PROBE_OUT (json path), PROBE_CODE (the code),
--      PROBE_WAIT_MS (how long to wait for it)
local out = { steps = {} }
local function step(name, value) out.steps[name] = value end
local code = os.getenv('PROBE_CODE')

local function codes(buf)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local c = d.code or ((d.user_data and d.user_data.lsp) or {}).code
    if c then seen[#seen + 1] = c end
  end
  table.sort(seen)
  return seen
end

local function main()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('PROBE_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  local changedtick = vim.api.nvim_buf_get_changedtick(buf)
  local client_id = vim.lsp.start({
    name = 'tritonlens',
    cmd = { os.getenv('PROBE_PY'), '-m', 'tritonlens', 'serve' },
    root_dir = vim.fn.fnamemodify(os.getenv('PROBE_FILE'), ':h'),
  }, { bufnr = buf })
  local t0 = vim.uv.hrtime()
  -- the static findings first
  vim.wait(30000, function() return #codes(buf) > 0 end, 50)
  step('static_codes', codes(buf))
  local got = vim.wait(tonumber(os.getenv('PROBE_WAIT_MS')), function()
    return vim.tbl_contains(codes(buf), code)
  end, 100)
  step('seconds', (vim.uv.hrtime() - t0) / 1e9)
  step('codes', codes(buf))
  step('edited', vim.api.nvim_buf_get_changedtick(buf) ~= changedtick)
  local client = vim.lsp.get_client_by_id(client_id)
  step('pull', client.server_capabilities.diagnosticProvider ~= nil)
  if not got then error('no ' .. code .. ' without an edit') end
end

local ok, err = pcall(main)
out.ok = ok
out.error = (not ok) and tostring(err) or nil
vim.fn.writefile({ vim.json.encode(out) }, os.getenv('PROBE_OUT'))
vim.cmd(ok and 'qa!' or 'cquit 1')
