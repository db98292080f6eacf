// What every code-server driver needs of the browser: the system Chromium, headless, without the
// network traffic of a first run, and numbered screenshots recorded in the driver's UI report.
const { chromium } = require('playwright-core');
const path = require('path');

function launch(env) {
  return chromium.launch({
    executablePath: env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

// shot(page, name) writes NN-name.png into `dir` and lists it in ui.shots.
function shooter(dir, ui) {
  return async (page, name) => {
    const file = path.join(dir, `${String(ui.shots.length + 1).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file });
    ui.shots.push(path.basename(file));
  };
}

module.exports = { launch, shooter };
