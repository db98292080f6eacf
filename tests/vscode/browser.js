// What every code-server driver needs of the browser: the system Chromium, headless, without the
// network traffic of a first run, and numbered screenshots recorded in the driver's UI report.
const { chromium } = require('playwright-core');
const fs = require('fs');
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

// The frame of a driver: a page of `viewport`, then body({ page, shot, step, toasts }); on a failure
// the toasts then on the page and a last screenshot go into the UI report, which is written whatever
// happened; the process exits 1 on a failure.
function drive(env, ui, viewport, body) {
  const run = async () => {
    fs.mkdirSync(env.SHOTS, { recursive: true });
    const browser = await launch(env);
    const shoot = shooter(env.SHOTS, ui);
    let page;
    const kit = {
      shot: name => shoot(page, name),
      step: (name, t0) => ui.steps.push({ name, ms: Date.now() - t0 }),
      toasts: async () => page.$$eval('.notification-toast .notification-list-item-message', els => els.map(e => e.innerText.trim())),
    };
    try {
      page = await browser.newPage({ viewport });
      await body({ page, ...kit });
    } catch (e) {
      ui.error = String(e);
      if (page) {
        ui.toasts.push(...(await kit.toasts().catch(() => [])));
        await kit.shot('failed').catch(() => {});
      }
      throw e;
    } finally {
      fs.writeFileSync(env.UI_OUT, JSON.stringify(ui, null, 2));
      await browser.close();
    }
  };
  run().catch(e => {
    console.error(e);
    process.exit(1);
  });
}

// Opens a quick input with `key` (F1: the command palette, Control+G: go to line, Control+P: quick
// open) and returns its input box. On a loaded machine the workbench can drop the key while it is
// busy: the key is pressed again, three times at most, before the wait fails.
async function quickInput(page, key) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press(key);
    try {
      await input.waitFor({ state: 'visible', timeout: 10000 });
      return input;
    } catch (e) {
      if (attempt >= 3) throw e;
      await page.keyboard.press('Escape');
    }
  }
}

// The workbench at `url`, then `file` opened from the explorer, ready once the server's Profile lens
// is in the editor.
async function openFromExplorer(page, url, file) {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: file }).first();
  await row.waitFor({ timeout: 30000 });
  await row.dblclick();
  await page.locator('.codelens-decoration a', { hasText: /^Profile$/ }).first().waitFor({ state: 'attached', timeout: 90000 });
}

module.exports = { drive, launch, openFromExplorer, quickInput, shooter };
