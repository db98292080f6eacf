-- What the Neovim drivers share: starting the server on the opened buffer, and writing what a run
-- saw as JSON before quitting with its status (a failed run still leaves its steps to read).
-- env: PROBE_PY (python), PROBE_FILE (.py to open), PROBE_OUT (json path), PROBE_SELECT (optional:
-- comma-separated rule ids the server reports instead of its default set)
local M = {}

function M.open_with_server()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('PROBE_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start({
    name = 'tritonlens',
    cmd = { os.getenv('PROBE_PY'), '-m', 'tritonlens', 'serve' },
    root_dir = vim.fn.fnamemodify(os.getenv('PROBE_FILE'), ':h'),
    init_options = os.getenv('PROBE_SELECT') and { select = vim.split(os.getenv('PROBE_SELECT'), ',') } or nil,
  }, { bufnr = buf })
  return buf, client_id
end

function M.run(out, main)
  local ok, err = pcall(main)
  out.ok = ok
  out.error = (not ok) and tostring(err) or nil
  vim.fn.writefile({ vim.json.encode(out) }, os.getenv('PROBE_OUT'))
  vim.cmd(ok and 'qa!' or 'cquit 1')
end

return M
