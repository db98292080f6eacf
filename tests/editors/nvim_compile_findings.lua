-- Open a kernel file in headless Neovim and wait, without editing, until the compile-backed
-- finding PROBE_CODE shows; results -> JSON.
-- env: PROBE_PY (python), PROBE_FILE (.py to open), PROBE_OUT (json path), PROBE_CODE (the code),
--      PROBE_WAIT_MS (how long to wait for it)
local probe = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'nvim_probe.lua'))
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
  local buf, client_id = probe.open_with_server()
  local changedtick = vim.api.nvim_buf_get_changedtick(buf)
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

probe.run(out, main)
