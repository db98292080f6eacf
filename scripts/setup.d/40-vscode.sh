#!/usr/bin/env bash
# The VS Code end-to-end test's pieces: Debian chromium, code-server 4.100.3 (a real VS Code 1.100,
# installed from the npm registry without its internet-fetching install scripts), playwright-core
# (drives the system chromium; downloads no browser), and the extension built and packaged as a .vsix.
# Everything heavy is cached under ${TRITONLENS_CACHE:-$HOME/.cache/tritonlens}/vscode, so a rerun
# only rebuilds the extension (a few seconds).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${TRITONLENS_CACHE:-$HOME/.cache/tritonlens}/vscode
mkdir -p "$cache"
export npm_config_cache=$cache/npm npm_config_yes=true npm_config_unsafe_perm=true
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# node-gyp would download Node's headers (unreachable here): use the ones Debian's nodejs ships.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then export npm_config_nodedir=/usr; fi
CODE_SERVER_VERSION=4.100.3      # the last code-server whose engines.node is 20
PLAYWRIGHT_VERSION=1.65.1

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then echo "40-vscode: need root to apt-get install ${missing[*]}" >&2; return 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# chromium for the browser, libkrb5-dev + ripgrep + a compiler for code-server's native modules.
apt_install chromium libkrb5-dev ripgrep g++ make

# code-server: a plain `npm install` fails offline (a ripgrep download, root unsafe-perm, kerberos
# headers), so install with scripts off and run the needed steps by hand.
cs_root=$cache/code-server-$CODE_SERVER_VERSION
if [ ! -f "$cs_root/.complete" ]; then
  rm -rf "$cs_root" && mkdir -p "$cs_root"
  (
    cd "$cs_root"
    npm install --silent --no-save --ignore-scripts "code-server@$CODE_SERVER_VERSION"
    cs=$cs_root/node_modules/code-server
    cd "$cs/lib/vscode"
    npm install --silent --omit=dev --ignore-scripts
    mkdir -p node_modules/@vscode/ripgrep/bin     # its postinstall skips the download if bin/ exists
    ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    cd "$cs"
    npm_config_user_agent="npm/$(npm -v) node/$(node -v) linux x64" sh ./postinstall.sh
    cd "$cs/lib/vscode" && npm rebuild --silent  # node-pty, kerberos, spdlog, watchdog
    cd "$cs_root" && npm rebuild --silent argon2  # its prebuilt download fails: build from source
  ) > "$cache/code-server-install.log" 2>&1 || { tail -40 "$cache/code-server-install.log" >&2; exit 1; }
  touch "$cs_root/.complete"
fi
ln -sfn "$cs_root/node_modules/code-server" "$cache/code-server"

pw_root=$cache/playwright-$PLAYWRIGHT_VERSION
if [ ! -f "$pw_root/.complete" ]; then
  rm -rf "$pw_root" && mkdir -p "$pw_root"
  (cd "$pw_root" && npm install --silent --no-save "playwright-core@$PLAYWRIGHT_VERSION")
  touch "$pw_root/.complete"
fi
ln -sfn "$pw_root/node_modules" "$cache/node_modules"

# The extension itself: lock-file install, bundle, package.
cd "$repo/client-vscode"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.lock-sha256 2>/dev/null)" != "$lock_sum" ]; then
  npm ci --silent
  echo "$lock_sum" > node_modules/.lock-sha256
fi
npm run --silent package
echo "40-vscode: code-server $CODE_SERVER_VERSION, playwright-core $PLAYWRIGHT_VERSION in $cache"
