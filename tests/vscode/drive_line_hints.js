// A recorded line profile opened in code-server (playwright-core, headless Chromium), as a person on
// a laptop reads a profile taken on a GPU host: open the kernel file, run "tritonlens: Open
// recorded profile…" and pick the JSON in the file dialog, then read the end-of-line hints off the
// page and hover the hottest line; insert a line above the kernel and read the hints again.
// A screenshot per step.
// env: CS_URL, UI_OUT (json), SHOTS (folder), FILE (name in the explorer), PROFILE (absolute path of
//      the report), HOT (text of the hottest line), ABOVE (1-based line to insert a comment after)
const browserKit = require('./browser');

const env = process.env;
const ui = { steps: [], shots: [], toasts: [], hints: [], moved: [], hover: null, dialog: null };

// Each editor line that carries a stall hint ("41% · …"), with its text: the hint is drawn inside
// the line it belongs to, so the line's own code says where it sits.
function hintedLines() {
  const out = [];
  for (const line of document.querySelectorAll('.monaco-editor .view-lines .view-line')) {
    const text = line.innerText.replace(/[\u00a0\u200b\u200c]/g, ' ').replace(/ +/g, ' ');
    const m = text.match(/(\d+% · [^\n]+)$/);
    if (m) out.push({ top: parseFloat(line.style.top) || 0, text, hint: m[1].trim() });
  }
  return out.sort((a, b) => a.top - b.top);
}

browserKit.drive(env, ui, { width: 1600, height: 900 }, async ({ page, shot, step, toasts }) => {
  const line = text => page.locator('.monaco-editor .view-lines .view-line', { hasText: text }).first();
  const gotoLine = async n => {
    await browserKit.quickInput(page, 'Control+G');
    await page.keyboard.type(String(n));
    await page.keyboard.press('Enter');
  };
  let t0 = Date.now();
  await browserKit.openFromExplorer(page, env.CS_URL, env.FILE);
  step('opened', t0);
  await page.keyboard.press('Control+B'); // the side bar closed: the longest hot line's hint in view

  // The command, from the palette; the file dialog (code-server's own, a quick input holding a path).
  t0 = Date.now();
  const input = await browserKit.quickInput(page, 'F1');
  await input.fill('>tritonlens: Open recorded profile');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open recorded profile' }).first().waitFor({ timeout: 10000 });
  await page.keyboard.press('Enter');
  await page.waitForTimeout(1000);
  ui.dialog = await input.inputValue().catch(() => null);
  await input.fill(env.PROFILE);
  await page.waitForTimeout(800);
  await shot('file-dialog');
  await page.keyboard.press('Enter');
  await page.locator('.notification-toast', { hasText: 'opened' }).first().waitFor({ timeout: 30000 });
  ui.toasts.push(...(await toasts()));
  await page.waitForFunction(() => [...document.querySelectorAll('.monaco-editor .view-line')]
    .some(l => /\d+%[\s\u00a0]·[\s\u00a0]/.test(l.innerText)), null, { timeout: 30000 });
  step('hints shown', t0);
  await gotoLine(18);
  await page.waitForTimeout(800);
  ui.hints = await page.evaluate(hintedLines);
  await shot('hints');

  // The hottest line's hover, with the mouse on its first token.
  t0 = Date.now();
  await page.keyboard.press('Escape');
  const hot = line(env.HOT);
  const token = hot.locator('span > span').first();
  const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents').first();
  for (let attempt = 0; attempt < 5 && !ui.hover; attempt++) {
    await page.mouse.move(5, 5);
    await token.hover();
    try {
      await hover.waitFor({ state: 'visible', timeout: 6000 });
      const text = await hover.innerText();
      if (text.includes('stall samples')) ui.hover = text;
    } catch {
      /* not shown yet: move away and back */
    }
  }
  await page.waitForTimeout(400); // the card fades in
  step('hover', t0);
  await shot('hover');

  // A comment typed above the kernel: the hints move with their lines.
  t0 = Date.now();
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');
  await gotoLine(Number(env.ABOVE));
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('# a line typed above the kernel', { delay: 30 });
  await page.keyboard.press('Escape');
  await page.waitForTimeout(2500);
  ui.moved = await page.evaluate(hintedLines);
  step('moved', t0);
  await shot('moved');
});
