// The report view's roofline picture in code-server (playwright-core, headless Chromium), from a
// profile recorded on a GPU host: open the kernel file, run "tritonlens: Open recorded profile…"
// and pick the JSON in the file dialog, then "tritonlens: Show last report" and read the picture
// off the report's webview (is it there, did the browser decode it, how large is it drawn).
// A screenshot per step; the last one has the report beside the code.
// env: CS_URL, UI_OUT (json), SHOTS (folder), FILE (name in the explorer), PROFILE (absolute path
//      of the report)
const browserKit = require('./browser');

const env = process.env;
const ui = { steps: [], shots: [], toasts: [], image: null, heading: null };

// In the webview's document: the roofline image as the browser decoded it, scrolled into view.
function rooflineImage() {
  const img = document.querySelector('img[alt^="roofline of"]');
  if (!img) return null;
  img.scrollIntoView({ block: 'start' });
  const box = img.getBoundingClientRect();
  const heading = [...document.querySelectorAll('h2')].find(h => h.textContent.trim() === 'Roofline');
  return {
    alt: img.alt, src: img.src.slice(0, 26), complete: img.complete, naturalWidth: img.naturalWidth,
    naturalHeight: img.naturalHeight, shownWidth: Math.round(box.width), shownHeight: Math.round(box.height),
    heading: heading ? heading.textContent.trim() : null, title: document.querySelector('h1')?.textContent.trim() ?? null,
  };
}

browserKit.drive(env, ui, { width: 1600, height: 900 }, async ({ page, shot, step, toasts }) => {
  const palette = async (text, row) => {
    const input = await browserKit.quickInput(page, 'F1');
    await input.fill(`>${text}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
    return input;
  };
  let t0 = Date.now();
  await browserKit.openFromExplorer(page, env.CS_URL, env.FILE);
  step('opened', t0);

  // The recorded profile, through the command and code-server's file dialog (a path in a quick input).
  t0 = Date.now();
  const input = await palette('tritonlens: Open recorded profile', 'Open recorded profile');
  await page.waitForTimeout(1000);
  await input.fill(env.PROFILE);
  await page.waitForTimeout(800);
  await page.keyboard.press('Enter');
  await page.locator('.notification-toast', { hasText: 'opened' }).first().waitFor({ timeout: 30000 });
  ui.toasts.push(...(await toasts()));
  step('profile opened', t0);

  // The report view beside the code; its picture is read from inside the webview's frames.
  t0 = Date.now();
  await palette('tritonlens: Show last report', 'Show last report');
  const deadline = Date.now() + 30000;
  while (!ui.image && Date.now() < deadline) {
    for (const frame of page.frames()) {
      const found = await frame.evaluate(rooflineImage).catch(() => null);
      if (found && found.complete && found.naturalWidth > 0) ui.image = found;
    }
    if (!ui.image) await page.waitForTimeout(300);
  }
  step('report shown', t0);
  await page.mouse.move(5, 5);
  await page.waitForTimeout(800);
  await shot('report-roofline');
  if (!ui.image) throw new Error('no decoded roofline image in the report view');
});
