// The mini-app side of conveyor's Telegram checks (built into `conveyord`, written beside a
// run's output and run with Node). Reads one JSON object on stdin:
//   {chromium, url, init_data, user, auth_date, query_id, screenshots, steps: [{n, kind:
//    "open" | "click" | "fill" | "expect", url?, selector?, text?, pattern?, timeout_ms?}]}
// and prints one JSON line: {findings: [...]} (empty: passed) or {error} when it could not run.
//
// Playwright drives the system's Chromium (`executablePath`; it downloads no browser). Before
// the page's own scripts a `Telegram.WebApp` shim is in place with the signed `initData`, and
// a page that loads telegram-web-app.js from telegram.org gets an empty script instead, so the
// shim stays and nothing leaves the machine for it. The URL's fragment carries `tgWebAppData`
// as Telegram's clients put it there, for apps that read it from the location.
//
// `playwright-core` is found through NODE_PATH (`[telegram] node_modules`): an ES import
// ignores NODE_PATH, so it is required.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function done(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function readStdin() {
  let s = '';
  for await (const chunk of process.stdin) s += chunk;
  return JSON.parse(s);
}

/** Runs in the page before its scripts: Telegram's WebApp object as a client provides it. */
function shim(d) {
  const noop = () => {};
  const handlers = {};
  const button = () => {
    const b = {
      text: '', color: '#2481cc', textColor: '#ffffff', isVisible: false, isActive: true, isProgressVisible: false,
      setText(t) { b.text = t; return b; },
      show() { b.isVisible = true; return b; },
      hide() { b.isVisible = false; return b; },
      enable() { b.isActive = true; return b; },
      disable() { b.isActive = false; return b; },
      showProgress() { b.isProgressVisible = true; return b; },
      hideProgress() { b.isProgressVisible = false; return b; },
      setParams(p) { Object.assign(b, p); return b; },
      onClick(cb) { (b.clicks ||= []).push(cb); return b; },
      offClick(cb) { b.clicks = (b.clicks || []).filter((c) => c !== cb); return b; },
    };
    return b;
  };
  const unsafe = { query_id: d.query_id, user: d.user, auth_date: String(d.auth_date) };
  unsafe.hash = new URLSearchParams(d.init_data).get('hash');
  window.Telegram = {
    WebApp: {
      initData: d.init_data,
      initDataUnsafe: unsafe,
      version: '8.0',
      platform: 'tdesktop',
      colorScheme: 'light',
      themeParams: {},
      isExpanded: true,
      viewportHeight: window.innerHeight,
      viewportStableHeight: window.innerHeight,
      MainButton: button(),
      SecondaryButton: button(),
      BackButton: button(),
      SettingsButton: button(),
      HapticFeedback: { impactOccurred: noop, notificationOccurred: noop, selectionChanged: noop },
      CloudStorage: { setItem: (k, v, cb) => cb && cb(null, true), getItem: (k, cb) => cb && cb(null, ''), removeItem: (k, cb) => cb && cb(null, true), getKeys: (cb) => cb && cb(null, []) },
      ready: noop,
      expand: noop,
      close() { window.__conveyorClosed = true; },
      sendData(x) { window.__conveyorSentData = String(x); },
      onEvent(e, cb) { (handlers[e] ||= []).push(cb); },
      offEvent(e, cb) { handlers[e] = (handlers[e] || []).filter((c) => c !== cb); },
      isVersionAtLeast: () => true,
      openLink: noop,
      openTelegramLink: noop,
      showAlert: (m, cb) => cb && cb(),
      showConfirm: (m, cb) => cb && cb(true),
      showPopup: (p, cb) => cb && cb(p.buttons?.[0]?.id ?? ''),
      setHeaderColor: noop,
      setBackgroundColor: noop,
      enableClosingConfirmation: noop,
      disableClosingConfirmation: noop,
      enableVerticalSwipes: noop,
      disableVerticalSwipes: noop,
    },
  };
}

const spec = await readStdin();
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  done({ error: `playwright-core is not installed where NODE_PATH points (${process.env.NODE_PATH ?? 'unset'}): ${e.message}` });
  process.exit(0);
}

let browser;
try {
  browser = await chromium.launch({ executablePath: spec.chromium, headless: true });
} catch (e) {
  done({ error: `Chromium did not start from ${spec.chromium}: ${e.message.split('\n')[0]}` });
  process.exit(0);
}

const findings = [];
try {
  const context = await browser.newContext({ locale: 'ru-RU' });
  await context.route(/^https:\/\/telegram\.org\/js\/telegram-web-app\.js/, (r) =>
    r.fulfill({ status: 200, contentType: 'text/javascript', body: '/* conveyor: the shim is in place */' }),
  );
  await context.addInitScript(shim, spec);
  const page = await context.newPage();
  fs.mkdirSync(spec.screenshots, { recursive: true });
  const fragment = `#tgWebAppData=${encodeURIComponent(spec.init_data)}&tgWebAppVersion=8.0&tgWebAppPlatform=tdesktop`;
  const open = (u) => {
    const url = new URL(u ?? '', spec.url);
    if (!url.hash) url.hash = fragment.slice(1);
    return page.goto(url.toString());
  };
  const fail = async (n, text) => {
    const shot = path.join(spec.screenshots, `step-${n}.png`);
    try {
      await page.screenshot({ path: shot, fullPage: true });
      findings.push(`${text} (screenshot: ${shot})`);
    } catch (e) {
      findings.push(`${text} (no screenshot: ${e.message.split('\n')[0]})`);
    }
  };
  if (spec.steps[0]?.kind !== 'open') await open();
  for (const s of spec.steps) {
    const secs = Math.round((s.timeout_ms ?? 0) / 100) / 10;
    if (s.kind === 'open') {
      await open(s.url);
    } else if (s.kind === 'click') {
      try {
        await page.locator(s.selector).first().click({ timeout: s.timeout_ms });
      } catch {
        await fail(s.n, `step ${s.n}: nothing to click at ${s.selector} within ${secs} s`);
        break;
      }
    } else if (s.kind === 'fill') {
      try {
        await page.locator(s.selector).first().fill(s.text, { timeout: 10_000 });
      } catch {
        await fail(s.n, `step ${s.n}: nothing to fill at ${s.selector} within 10 s`);
        break;
      }
    } else if (s.kind === 'expect') {
      const re = new RegExp(s.pattern, 'u');
      const where = s.selector ?? 'body';
      const deadline = Date.now() + s.timeout_ms;
      let got = null;
      let ok = false;
      for (;;) {
        got = await page.locator(where).first().innerText({ timeout: 1_000 }).catch(() => null);
        if (got !== null && re.test(got)) {
          ok = true;
          break;
        }
        if (Date.now() >= deadline) break;
        await page.waitForTimeout(100);
      }
      if (!ok) {
        const seen = got === null ? `no element at ${where}` : `«${got.split(/\s+/).join(' ').trim().slice(0, 200)}»`;
        await fail(s.n, `step ${s.n}: expected /${s.pattern}/, got ${seen}`);
        break;
      }
    }
  }
} catch (e) {
  findings.push(`the page failed: ${e.message.split('\n')[0]}`);
} finally {
  await browser.close().catch(() => {});
}
done({ findings });
