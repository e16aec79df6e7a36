// The evening's queue in the app, with the daemon embedded and running no line (`run_lines =
// false`: the lines stay queued, so their order is the only thing that changes). Three lines are
// queued at once from the form's rows, in order; a fourth, the same title as one of them, is
// refused at its title with the daemon's reason. Then the third line is dragged above the first
// with WebDriver pointer actions (down on its grip, moves, up over the first row: pointer
// events, since HTML drag events never reach a window that takes file drops), and the second is
// moved up with Alt+↑: after each, the daemon's own order (`GET /api/lines?state=queued`, the
// scheduler's order) is the order the page shows. Screenshots go to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, launch, makeHome, screenshot } from './harness.mjs';
import { embeddedConnected, makeRepo } from './support.mjs';
import { Key, WAIT_MS } from './webdriver.mjs';

const TOKEN = 'queue-order-token-0123456789';
const TITLES = ['Меню', 'Вход', 'Выход'];

let app;
let dirs;
let repo;
let url;

async function api(p) {
  const r = await fetch(`${url}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** The queued lines' titles in the daemon's order. */
const daemonOrder = async () => (await api('/api/lines?state=queued')).map((l) => l.title);

/** The queued group's titles as the page shows them. */
const pageOrder = (d) =>
  d.script(
    "return [...document.querySelectorAll('[data-testid=queued-item] [data-testid=line-row] .title')].map((t) => t.textContent);",
  );

/** The page's queued group and the daemon agree on `want`. */
async function ordered(d, want, what) {
  await d.until(async () => JSON.stringify(await daemonOrder()) === JSON.stringify(want), `${what}: the daemon's order`);
  await d.until(async () => JSON.stringify(await pageOrder(d)) === JSON.stringify(want), `${what}: the page's order`);
}

before(async () => {
  dirs = makeHome('queue-order');
  repo = path.join(dirs.home, 'вечерний проект');
  makeRepo(repo, { 'README.md': 'evening\n' });
  const appData = path.join(dirs.data, 'dev.pult.app');
  fs.mkdirSync(appData, { recursive: true });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // The embedded daemon on a known port and token, so the test reads its order through its API.
  fs.writeFileSync(
    path.join(appData, 'conveyor.toml'),
    `listen = "127.0.0.1:${port}"\ntoken = "${TOKEN}"\nrun_lines = false\ntick_ms = 100\n`,
  );
  app = await launch({
    env: { HOME: dirs.home, XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, PULT_NO_KEYRING: '1' },
  });
});

after(async () => {
  await app?.stop();
});

test('lines queued at once, then the queue reordered by dragging and by keys: the daemon keeps the order shown', async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');

  // A project, then three lines from three rows of the form, sent in their order.
  await d.type('[data-testid=project-name]', 'evening');
  await d.type('[data-testid=project-repo]', repo);
  await d.click('[data-testid=project-add]');
  await d.waitFor('[data-testid=project-added]');
  await d.click('[data-testid=line-add-row]');
  await d.click('[data-testid=line-add-row]');
  await d.until(async () => (await d.findAll('[data-testid=line-draft]')).length === 3, 'three rows in the form');
  for (const [i, title] of TITLES.entries()) {
    await d.type(`[data-testid=line-draft][data-row="${i}"] [data-testid=line-title]`, title);
    await d.type(`[data-testid=line-draft][data-row="${i}"] [data-testid=line-task]`, `Сделать: ${title}.`);
  }
  assert.equal((await d.text('[data-testid=line-add]')).trim(), 'Поставить в очередь: 3');
  await d.click('[data-testid=line-add]');
  await d.waitFor('[data-testid=line-added][data-count="3"]');
  // Equal priorities: they start in the order they were sent.
  await ordered(d, TITLES, 'the lines as queued');
  assert.equal((await d.findAll('[data-testid=line-draft]')).length, 1, 'one empty row left');

  // One more with a title the project has open: refused at its title, with the daemon's reason.
  await d.type('[data-testid=line-draft][data-row="0"] [data-testid=line-title]', 'вход ');
  await d.type('[data-testid=line-draft][data-row="0"] [data-testid=line-task]', 'Ещё раз.');
  await d.click('[data-testid=line-add]');
  const refusal = await d.until(
    () =>
      d.script(
        "const e = document.querySelector('[data-testid=line-title-error]'); return e ? { row: e.closest('[data-testid=line-draft]').dataset.refused, text: e.firstChild.textContent, raw: e.querySelector('.raw')?.textContent ?? '', bad: e.previousElementSibling?.classList.contains('bad') } : null;",
      ),
    'the refusal at the title',
  );
  assert.equal(refusal.row, 'duplicate_title');
  assert.equal(refusal.text, 'В проекте уже есть открытая линия с таким названием: поменяйте её приоритет или отмените её.');
  assert.ok(refusal.raw.includes('Вход'), refusal.raw);
  assert.equal(refusal.bad, true);
  assert.deepEqual(await daemonOrder(), TITLES, 'nothing queued');
  await screenshot(d, 'queue-order-refused');

  // Drag «Выход» by its grip above «Меню», with the pointer. The points are read once the page
  // has stopped moving: the preflight banner and the form's notes come and go as the daemon
  // answers, and a pointer pressed where the grip was a moment ago presses something else.
  // Two readings 300 ms apart must agree, and the grip must be what is under the point.
  const measure = () =>
    d.script(
      `document.querySelector('[data-testid=queued-list]').scrollIntoView({ block: 'center' });
       const item = (t) => [...document.querySelectorAll('[data-testid=queued-item]')].find((i) => i.querySelector('.title').textContent === t);
       const g = item(arguments[0]).querySelector('[data-testid=line-grip]');
       const grip = g.getBoundingClientRect();
       const first = item(arguments[1]).getBoundingClientRect();
       const from = { x: grip.left + grip.width / 2, y: grip.top + grip.height / 2 };
       return { from, to: { x: from.x, y: first.top + 3 }, hit: document.elementFromPoint(from.x, from.y) === g };`,
      ['Выход', 'Меню'],
    );
  let last = null;
  const points = await d.until(
    async () => {
      const m = await measure();
      const same = last && m.hit && JSON.stringify(m) === JSON.stringify(last);
      last = m;
      return same ? m : null;
    },
    'the queue standing still under the pointer',
    WAIT_MS,
    300,
  );
  await d.press(points.from);
  await d.moveTo(points.from, points.to);
  // Mid-drag: the line lifted, a drop indicator in the gap above the first row.
  const midDrag = () =>
    d.script(
      "const i = document.querySelector('[data-testid=drop-indicator]'); return { gap: i?.dataset.gap ?? null, lifted: [...document.querySelectorAll('[data-testid=queued-item].lifted .title')].map((t) => t.textContent) };",
    );
  const want = { gap: '0', lifted: ['Выход'] };
  await d
    .until(async () => JSON.stringify(await midDrag()) === JSON.stringify(want), 'the line lifted over the first gap')
    .catch(async (e) => assert.fail(`${e.message}: ${JSON.stringify(await midDrag())}`));
  await screenshot(d, 'queue-order-dragging');
  await d.release();
  await ordered(d, ['Выход', 'Меню', 'Вход'], 'after the drag');
  // Said to a screen reader too (the region is visually hidden, so read its text).
  const announced = () => d.script("return document.querySelector('[data-testid=queue-announce]').textContent;");
  await d
    .until(async () => (await announced()) === '«Выход»: теперь 1-я в очереди из 3', 'the move announced')
    .catch(async (e) => assert.fail(`${e.message}: ${await announced()}`));
  await screenshot(d, 'queue-order-dragged');

  // «Вход» one up with Alt+↑ on its grip; the focus stays on it for the next key.
  await d.script(
    "[...document.querySelectorAll('[data-testid=line-grip]')].find((g) => g.closest('[data-testid=queued-item]').querySelector('.title').textContent === arguments[0]).focus();",
    ['Вход'],
  );
  await d.keys([Key.ALT, Key.ARROW_UP]);
  await ordered(d, ['Выход', 'Вход', 'Меню'], 'after Alt+↑');
  const focused = await d.until(
    () => d.script("const g = document.activeElement; return g?.dataset.testid === 'line-grip' ? g.closest('[data-testid=queued-item]').querySelector('.title').textContent : null;"),
    'the focus on the moved line',
  );
  assert.equal(focused, 'Вход');
  await d.keys([Key.ALT, Key.ARROW_UP]);
  await ordered(d, ['Вход', 'Выход', 'Меню'], 'after Alt+↑ again');
  await screenshot(d, 'queue-order-keys');
});
