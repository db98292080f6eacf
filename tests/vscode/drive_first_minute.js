// The first minute with a kernel file, as a person at code-server in Chromium sees it (playwright-core,
// headless; only what the page shows counts): the Problems panel is open when the file is opened from
// the explorer, and the page notes when the first problem row and the first squiggle appear. Then the
// kernel cards are hovered until the compile's facts are in them, the pin comment above PIN_KERNEL is
// edited (its last character replaced by PIN_TO) and saved, and the page is watched until the problems
// and the card show the pinned configuration. A screenshot per step.
// env: CS_URL, UI_OUT (json), SHOTS (folder), FILE (name in the explorer), HOVER (json: [[kernel, its def
//      line], ...]), PIN_KERNEL, PIN_LINE (1-based), PIN_TO (the new last character), PINNED_SIGN (text
//      of a problem row that only the pinned configuration gives), WAIT_MS
const browserKit = require('./browser');
const fs = require('fs');

const env = process.env;
const waitMs = Number(env.WAIT_MS || 150000);
const ui = { steps: [], notifications: [], shots: [], firstProblem: null, cards: {}, problems: {}, pinned: null };

// Every notification, and the first problem row and squiggle, sampled in the page itself.
function watchPage(t0) {
  window.__tlSeen = [];
  window.__tlFirst = { problemMs: null, problem: null, squiggleMs: null, editorMs: null };
  const toasts = new WeakSet();
  setInterval(() => {
    for (const toast of document.querySelectorAll('.notification-toast')) {
      const item = toast.querySelector('.notification-list-item');
      const message = item?.querySelector('.notification-list-item-message')?.innerText?.trim() ?? '';
      if (!message || toasts.has(toast)) continue;
      toasts.add(toast);
      const icon = item.querySelector('.notification-list-item-icon')?.className ?? '';
      const severity = /error/.test(icon) ? 'error' : /warning/.test(icon) ? 'warning' : 'info';
      window.__tlSeen.push({ message, severity, at: Date.now() });
    }
  }, 100);
  const first = window.__tlFirst;
  const poll = setInterval(() => {
    if (first.editorMs === null && document.querySelector('.monaco-editor .view-lines .view-line')) first.editorMs = Date.now() - t0;
    if (first.problemMs === null) {
      const row = [...document.querySelectorAll('.markers-panel .monaco-list-row')]
        .find(r => /tritonlens/.test(r.innerText) && /TL\d{3}/.test(r.innerText));
      if (row) { first.problemMs = Date.now() - t0; first.problem = row.innerText.replace(/\s+/g, ' ').trim(); }
    }
    if (first.squiggleMs === null && document.querySelector('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error, .monaco-editor .squiggly-info')) {
      first.squiggleMs = Date.now() - t0;
    }
    if (first.problemMs !== null && first.squiggleMs !== null && Date.now() - t0 > 10000) clearInterval(poll);
  }, 20);
}

// The extension's status bar item from the page's start: when the extension came up, before or after
// the file was opened.
function watchStatus() {
  window.__tlStatus = [];
  setInterval(() => {
    const text = document.querySelector('[id$="tritonlens.status"]')?.innerText?.trim();
    if (text && text !== window.__tlStatus.at(-1)?.text) window.__tlStatus.push({ at: Date.now(), text });
  }, 50);
}

// The Problems panel's marker rows (a file's row has no marker icon): severity from the icon.
function problemRows() {
  return [...document.querySelectorAll('.markers-panel .monaco-list-row')].flatMap(r => {
    const icon = r.querySelector('.marker-icon');
    if (!icon) return [];
    const severity = ['error', 'warning', 'info'].find(s => icon.classList.contains(s)) ?? icon.className;
    return [{ severity, text: r.innerText.replace(/\s+/g, ' ').trim() }];
  });
}

async function main() {
  fs.mkdirSync(env.SHOTS, { recursive: true });
  const browser = await browserKit.launch(env);
  let page;
  const shoot = browserKit.shooter(env.SHOTS, ui);
  const shot = name => shoot(page, name);
  const step = (name, t0) => ui.steps.push({ name, ms: Date.now() - t0 });
  const line = text => page.locator('.monaco-editor .view-lines .view-line', { hasText: text }).first();
  const gotoLine = async n => {
    await browserKit.quickInput(page, 'Control+G');
    await page.keyboard.type(String(n));
    await page.keyboard.press('Enter');
  };
  // The card of kernel `name`, hovered with the mouse on its name as a person does. `top`: the pin
  // comment scrolled to the editor's top first, so the card opens below the name and the pin shows.
  const card = async (name, at, top = false) => {
    await gotoLine(at);
    if (top) {
      const editorTop = (await page.locator('.monaco-editor .overflow-guard').first().boundingBox()).y;
      for (let i = 0; i < 40; i++) {
        // The editor renders only the lines in view: when the jump left the pin (just above the
        // kernel) out of it, as a code lens arriving late can, scroll up until it is drawn.
        if (await line('# tritonlens:').count() === 0) {
          await page.keyboard.press('Control+ArrowUp');
          await page.waitForTimeout(50);
          continue;
        }
        const box = await line('# tritonlens:').boundingBox();
        if (!box || box.y <= editorTop + 25) break;
        await page.keyboard.press('Control+ArrowDown'); // scrolls the view, the cursor stays
      }
    }
    const token = line(`def ${name}(`).locator('span > span', { hasText: new RegExp(`^${name}$`) }).first();
    const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents').first();
    for (let attempt = 0; attempt < 5; attempt++) {
      await page.mouse.move(5, 5);
      await token.hover();
      try {
        await hover.waitFor({ state: 'visible', timeout: 6000 });
        const text = await hover.innerText();
        if (text.includes(name)) return text;
      } catch {
        /* not shown yet: move away and back */
      }
    }
    return '';
  };
  const hovers = JSON.parse(env.HOVER);
  // Hover every kernel until `done(name, card)` holds for all of them, or the wait is over.
  const cardsUntil = async (done, started) => {
    const cards = {};
    while (Date.now() - started < waitMs) {
      for (const [name, at] of hovers) if (!(cards[name] && done(name, cards[name]))) cards[name] = await card(name, at);
      if (hovers.every(([name]) => done(name, cards[name]))) return cards;
      await page.mouse.move(5, 5);
      await page.waitForTimeout(1000);
    }
    return cards;
  };

  try {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    let t0 = Date.now();
    await page.goto(env.CS_URL, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await page.evaluate(watchStatus);
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: env.FILE }).first();
    await row.waitFor({ timeout: 30000 });
    step('workbench', t0);
    // A person opens a file once the window is up: a folder with Python files has activated the
    // extension by then, and its server runs (the status item's pulse; a spinner while it starts).
    await page.locator('[id$="tritonlens.status"] .codicon-pulse').first().waitFor({ timeout: 60000 });
    step('server running', t0);
    // The Problems panel open before the file is, so its first row is seen the moment it shows.
    await page.keyboard.press('Control+Shift+M');
    await page.locator('.markers-panel').first().waitFor({ state: 'visible', timeout: 10000 });

    t0 = Date.now();
    await page.evaluate(watchPage, t0);
    await row.dblclick();
    await page.waitForFunction(() => window.__tlFirst.problemMs !== null && window.__tlFirst.squiggleMs !== null,
      null, { timeout: 20000, polling: 100 }).catch(() => {});
    ui.firstProblem = await page.evaluate(() => window.__tlFirst);
    ui.firstProblem.status = (await page.evaluate(() => window.__tlStatus)).map(s => ({ ms: s.at - t0, text: s.text }));
    step('first problem', t0);
    await shot('first-problem');

    // The compile's facts, kernel by kernel, in the cards.
    t0 = Date.now();
    ui.cards.compiled = await cardsUntil((_, c) => /registers/.test(c ?? ''), t0);
    ui.problems.compiled = await page.evaluate(problemRows);
    step('compile facts', t0);
    await card(env.PIN_KERNEL, hovers.find(([n]) => n === env.PIN_KERNEL)[1], true);
    await page.waitForTimeout(400); // the card fades in
    await shot('compiled-hover-and-problems');

    // Edit the pin and save: the problems and the card follow the pinned configuration.
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await gotoLine(Number(env.PIN_LINE));
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(env.PIN_TO, { delay: 70 });
    await page.keyboard.press('Control+S');
    t0 = Date.now();
    const sign = env.PINNED_SIGN;
    const pinnedRow = page.locator('.markers-panel .monaco-list-row', { hasText: sign }).first();
    const seenPinned = await pinnedRow.waitFor({ timeout: waitMs }).then(() => true, () => false);
    ui.pinned = { problemMs: seenPinned ? Date.now() - t0 : null };
    ui.problems.pinned = await page.evaluate(problemRows);
    const at = hovers.find(([n]) => n === env.PIN_KERNEL)[1];
    ui.cards.pinned = { [env.PIN_KERNEL]: await card(env.PIN_KERNEL, at, true) };
    ui.pinned.line = (await line('# tritonlens:').innerText().catch(() => '')).replace(/\u00a0/g, ' ');
    step('pin honoured', t0);
    await page.waitForTimeout(400);
    await shot('pinned-hover-and-problems');
  } catch (e) {
    if (page) await shot('failed').catch(() => {});
    throw e;
  } finally {
    if (page) ui.notifications = await page.evaluate(() => window.__tlSeen ?? []).catch(() => ui.notifications);
    fs.writeFileSync(env.UI_OUT, JSON.stringify(ui, null, 2));
    await browser.close();
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
