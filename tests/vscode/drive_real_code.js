// A person at code-server in Chromium (playwright-core, headless) on a kernel file shaped like real
// projects' code, with no self test inside the extension: only what the page shows counts. Types
// lines into a kernel key by key, saves, runs Profile and Optimize once from the kernel's code lens
// and once from the command palette, hovers kernel names, previews a fix in a diff editor, and
// records every notification that shows on the way. A screenshot per step.
// env: CS_URL, UI_OUT (json), SHOTS (folder), FILE (name in the explorer), KERNEL (profiled and
//      optimized), KERNEL_LINE (1-based line inside it), HOVER (json: [[kernel, its def line], ...]),
//      TYPING (json: [[1-based line to type after, text typed], ...]), FIX_LINE (json: [line, text of
//      it]: the finding whose rule fix is previewed when Optimize offers no 'Preview best'),
//      RUN_TIMEOUT_MS
const browserKit = require('./browser');
const fs = require('fs');

const env = process.env;
const runTimeout = Number(env.RUN_TIMEOUT_MS || 180000);
const kernel = env.KERNEL;
const ui = { steps: [], notifications: [], typed: [], hovers: {}, runs: {}, preview: null, shots: [] };

// Every notification the page shows, sampled in the page itself so short-lived toasts are caught.
function recordNotifications() {
  window.__tlSeen = [];
  const toasts = new WeakSet(); // each notification gets a toast element of its own
  const note = () => {
    for (const toast of document.querySelectorAll('.notification-toast')) {
      const item = toast.querySelector('.notification-list-item');
      const message = item?.querySelector('.notification-list-item-message')?.innerText?.trim() ?? '';
      if (!message || toasts.has(toast)) continue;
      toasts.add(toast);
      const icon = item.querySelector('.notification-list-item-icon')?.className ?? '';
      const severity = /error/.test(icon) ? 'error' : /warning/.test(icon) ? 'warning' : 'info';
      const buttons = [...item.querySelectorAll('.monaco-button')].map(b => b.innerText.trim()).filter(Boolean);
      window.__tlSeen.push({ message, severity, buttons, at: Date.now() });
    }
  };
  setInterval(note, 100);
}

async function main() {
  fs.mkdirSync(env.SHOTS, { recursive: true });
  const browser = await browserKit.launch(env);
  let page;
  const shoot = browserKit.shooter(env.SHOTS, ui);
  const shot = name => shoot(page, name);
  const step = (name, t0) => ui.steps.push({ name, ms: Date.now() - t0 });
  const seen = () => page.evaluate(() => window.__tlSeen ?? []);
  const line = text => page.locator('.monaco-editor .view-lines .view-line', { hasText: text }).first();
  const toasts = page => page.locator('.notification-toast .notification-list-item');

  try {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    let t0 = Date.now();
    await page.goto(env.CS_URL, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await page.evaluate(recordNotifications);
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: env.FILE }).first();
    await row.waitFor({ timeout: 30000 });
    await row.dblclick();
    // Ready when the server's lenses are in the editor and its finding counts in the status bar.
    await page.locator('.codelens-decoration a', { hasText: /^Profile$/ }).first().waitFor({ state: 'attached', timeout: 90000 });
    await page.locator('[id="status.problems"]', { hasText: /[1-9]/ }).first().waitFor({ timeout: 60000 });
    step('opened', t0);
    await shot('opened');

    const palette = async (title, pickText) => {
      const input = await browserKit.quickInput(page, 'F1');
      await input.fill(`>${title}`);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: pickText ?? title }).first().waitFor({ timeout: 20000 });
      await page.keyboard.press('Enter');
    };
    // Ctrl+G, as a person reaches a line (it also brings the line into view).
    const gotoLine = async n => {
      await browserKit.quickInput(page, 'Control+G');
      await page.keyboard.type(String(n));
      await page.keyboard.press('Enter');
    };

    // Typing: a key at a time at a typist's pace, the suggest widget closed before each Enter so
    // the line ends as typed, never as a completion.
    t0 = Date.now();
    for (const [after, text] of JSON.parse(env.TYPING)) {
      await gotoLine(after);
      await page.keyboard.press('End');
      await page.keyboard.press('Escape');
      await page.keyboard.press('Enter');
      await page.keyboard.type(text, { delay: 70 });
      await page.keyboard.press('Escape');
      ui.typed.push(text);
      await shot(`typed-${ui.typed.length}`);
    }
    await page.keyboard.press('Control+S');
    await page.waitForTimeout(1500);
    step('typed', t0);
    await shot('saved');

    // Profile and Optimize, from the lens above the kernel and from the palette with the cursor in it.
    const workRunning = async () => (await page.locator('.statusbar-item', { hasText: 'tritonlens' }).first().innerText().catch(() => '')).includes(kernel);
    const awaitRun = async (verb, started) => {
      const prefix = `tritonlens ${verb} ${kernel}:`;
      let idleSince = null;
      while (Date.now() - started < runTimeout) {
        const hit = (await seen()).find(n => n.at >= started && n.message.startsWith(prefix));
        if (hit) {
          // A second message about the same run (the server's own, say) would show by now.
          await page.waitForTimeout(1500);
          return { ...hit, ms: hit.at - started, all: (await seen()).filter(n => n.at >= started).map(n => n.message) };
        }
        if (await workRunning()) idleSince = null;
        else idleSince ??= Date.now();
        // Finished without telling: no notification is coming.
        if (idleSince && Date.now() - idleSince > 8000 && Date.now() - started > 10000) return { message: null, ms: Date.now() - started, others: (await seen()).filter(n => n.at >= started) };
        await page.waitForTimeout(200);
      }
      return { message: null, timedOut: true, others: (await seen()).filter(n => n.at >= started) };
    };
    const clearNotifications = async () => {
      await palette('Notifications: Clear All Notifications');
      await toasts(page).first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
    };
    for (const [verb, lens, command] of [['profile', 'Profile', 'tritonlens: Profile kernel'], ['optimize', 'Optimize', 'tritonlens: Optimize kernel']]) {
      await clearNotifications();
      await gotoLine(Number(env.KERNEL_LINE));
      // The lens of this kernel: the nearest one above its `def` line. After the save the lenses
      // are drawn again, later on a loaded machine: looked for until they are back.
      const lenses = page.locator('.codelens-decoration a', { hasText: new RegExp(`^${lens}$`) });
      let target = null;
      for (const deadline = Date.now() + 30000; !target && Date.now() < deadline;) {
        const def = await line(`def ${kernel}(`).boundingBox().catch(() => null);
        for (const l of await lenses.all()) {
          const box = await l.boundingBox().catch(() => null);
          if (box && def && box.y < def.y && (!target || box.y > target.box.y)) target = { l, box };
        }
        if (!target) await page.waitForTimeout(500);
      }
      if (!target) throw new Error(`no ${lens} lens above def ${kernel}(`);
      t0 = Date.now();
      await target.l.click();
      const fromLens = await awaitRun(verb, t0);
      step(`${verb} from lens`, t0);
      await shot(`${verb}-lens`);

      await clearNotifications();
      await gotoLine(Number(env.KERNEL_LINE));
      t0 = Date.now();
      await palette(command);
      const fromPalette = await awaitRun(verb, t0);
      step(`${verb} from palette`, t0);
      await shot(`${verb}-palette`);
      ui.runs[verb] = { lens: fromLens, palette: fromPalette };
    }

    // Preview: of the best rewrite when Optimize proved one, else of the rule's fix on FIX_LINE
    // (tritonlens: Preview rewrite with the cursor on it). Either way a diff editor must open.
    t0 = Date.now();
    const best = page.locator('.notification-toast .monaco-button', { hasText: /^Preview best$/ }).first();
    if (await best.isVisible().catch(() => false)) {
      ui.preview = { path: 'Preview best', startedAt: Date.now() };
      await best.click();
    } else {
      ui.preview = { path: 'rule fix', startedAt: Date.now() };
      await clearNotifications();
      const [fixLine, fixText] = JSON.parse(env.FIX_LINE);
      await gotoLine(fixLine);
      await line(fixText).click();
      await palette('tritonlens: Preview rewrite');
      const pick = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: /^tritonlens \(TL\d{3}\)/ }).first();
      if (await pick.waitFor({ state: 'visible', timeout: 3000 }).then(() => true, () => false)) await pick.click();
    }
    const diff = page.locator('.monaco-diff-editor').first();
    ui.preview.diffOpen = await diff.waitFor({ state: 'visible', timeout: 30000 }).then(() => true, () => false);
    ui.preview.tab = await page.locator('.tab.active .label-name, .tab.active .monaco-icon-label').first().innerText().catch(() => '');
    ui.preview.modified = (await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().innerText().catch(() => '')).replace(/\u00a0/g, ' ');
    ui.preview.inserted = await page.locator('.monaco-diff-editor .editor.modified .line-insert, .monaco-diff-editor .editor.modified .char-insert').count();
    await page.waitForTimeout(1500); // an error raised after the diff opened still shows as a toast
    step('preview', t0);
    await shot('preview-diff');

    // The kernel cards, hovered with the mouse once the runs are in them (their largest form).
    await page.keyboard.press('Escape');
    await page.locator('.tabs-container .tab', { hasText: env.FILE, hasNotText: '↔' }).first().click();
    await clearNotifications();
    for (const [name, at] of JSON.parse(env.HOVER)) {
      t0 = Date.now();
      await gotoLine(at);
      const defLine = line(`def ${name}(`);
      const token = defLine.locator('span > span', { hasText: new RegExp(`^${name}$`) }).first();
      const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents').first();
      const card = { visible: false, text: '', scrolls: null };
      for (let attempt = 0; attempt < 5 && !card.visible; attempt++) {
        await page.mouse.move(5, 5);
        await token.hover();
        try {
          await hover.waitFor({ state: 'visible', timeout: 6000 });
          card.text = await hover.innerText();
          card.visible = card.text.includes(name);
        } catch {
          /* not shown yet: move away and back */
        }
      }
      // A card taller than its box scrolls: the user would not see all of it.
      card.scrolls = await page.locator('.monaco-hover:not(.hidden) .monaco-scrollable-element').first()
        .evaluate(e => e.scrollHeight > e.clientHeight + 2).catch(() => null);
      ui.hovers[name] = card;
      step(`hover ${name}`, t0);
      await page.waitForTimeout(400); // the card fades in
      await shot(`hover-${name}`);
    }
  } catch (e) {
    if (page) await shot('failed').catch(() => {});
    throw e;
  } finally {
    if (page) ui.notifications = await seen().catch(() => ui.notifications);
    fs.writeFileSync(env.UI_OUT, JSON.stringify(ui, null, 2));
    await browser.close();
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
