// A capture dead end as a person meets it in code-server (playwright-core, only the page counts):
// open the kernel file from the explorer, wait for the warning that names the missing module, press
// its "Set tritonlens.python" button, wait for the launches to be recorded, press the kernel's
// Profile lens and wait for its result lens. A screenshot per step.
// env: CS_URL, UI_OUT (json), SHOTS (folder), FILE (name in the explorer), MODULE, KERNEL, WAIT_MS
const browserKit = require('./browser');

const env = process.env;
const waitMs = Number(env.WAIT_MS || 240000);
const ui = { steps: [], shots: [], toasts: [], lenses: [] };

browserKit.drive(env, ui, { width: 1400, height: 900 }, async ({ page, shot, step, toasts }) => {
  const lenses = async () => page.$$eval('.contentWidgets .codelens-decoration a, .codelens-decoration a', els => els.map(e => e.innerText.trim()));
  const t0 = Date.now();
  await page.goto(env.CS_URL, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  // The kernel file lies in folders: open it by Quick Open, as a person who knows its name.
  await page.locator('[id$="tritonlens.status"] .codicon-pulse').first().waitFor({ timeout: 90000 });
  await browserKit.quickInput(page, 'Control+P');
  await page.keyboard.type(env.FILE);
  await page.waitForTimeout(1500);
  await page.keyboard.press('Enter');
  step('opened', t0);

  const warning = page.locator('.notification-toast', { hasText: env.MODULE }).first();
  await warning.waitFor({ timeout: waitMs });
  ui.toasts.push(...(await toasts()));
  step('warning', t0);
  await page.waitForTimeout(800); // the toast fades in
  await shot('capture-warning');
  await warning.locator('a.monaco-button, .monaco-button', { hasText: 'Set tritonlens.python' }).first().click();

  const recorded = page.locator('.notification-toast', { hasText: 'recorded' }).first();
  await recorded.waitFor({ timeout: waitMs });
  ui.toasts.push(...(await toasts()));
  step('recorded', t0);
  await shot('recorded');

  const profile = page.locator('.codelens-decoration a', { hasText: /^Profile$/ }).first();
  await profile.waitFor({ timeout: 60000 });
  await profile.click();
  const result = page.locator('.codelens-decoration a', { hasText: /interpreter|profile failed/ }).first();
  await result.waitFor({ timeout: waitMs });
  ui.lenses = await lenses();
  ui.toasts.push(...(await toasts()));
  step('profiled', t0);
  await shot('profiled');
});
