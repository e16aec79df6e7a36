// The preflight as a newcomer meets it: the app's embedded daemon runs the real `claude`, which
// is not logged in (an empty HOME, no key in its environment), so the Lines page says so in a
// banner with what to do before any line is lost, a queued line waits with that reason worded
// by its code, and Settings → Conveyor → Check lists the login item as blocking. Then deepwork's
// settings: unset numbers show deepwork's defaults as placeholders and saving writes nothing
// for them. Screenshots go to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, makeHome, screenshot } from './harness.mjs';
import { CLAUDE, embeddedConnected, makeRepo, queueLine } from './support.mjs';

let app;
let dirs;
let repo;
let deepworkConfig;

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  dirs = makeHome('preflight');
  repo = path.join(dirs.home, 'sample repo');
  makeRepo(repo, { 'README.md': 'sample\n' });
  const appData = path.join(dirs.data, 'dev.pult.app');
  fs.mkdirSync(appData, { recursive: true });
  // The agent's own HOME, empty: no credentials, and no key in its environment.
  const agentHome = path.join(dirs.home, 'agent-home');
  fs.mkdirSync(agentHome);
  const agentEnv = {
    HOME: agentHome,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
  fs.writeFileSync(
    path.join(appData, 'conveyor.toml'),
    `claude_bin = ${JSON.stringify(CLAUDE)}\ntick_ms = 100\nagent_env_inherit = false\n[agent_env]\n` +
      Object.entries(agentEnv).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join('\n') + '\n',
  );
  // deepwork's settings name a bridge and leave the numbers unset.
  deepworkConfig = path.join(dirs.config, 'deepwork', 'config.json');
  fs.mkdirSync(path.dirname(deepworkConfig), { recursive: true });
  fs.writeFileSync(deepworkConfig, JSON.stringify({ bridge: '/opt/orchestro/ask.mjs' }));
  const env = {
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    PULT_NO_KEYRING: '1',
  };
  // Nothing of the test's own environment may log the agent in.
  for (const k of ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN']) env[k] = '';
  app = await launch({ env });
});

after(async () => {
  await app?.stop();
});

const items = (d, within) =>
  d.script(
    `return [...document.querySelectorAll('${within} [data-testid=preflight-item]')].map((e) => ({
      code: e.dataset.code, level: e.dataset.level, scope: e.dataset.scope, text: e.textContent,
      message: e.querySelector('[data-testid=preflight-message]')?.textContent ?? '',
      fix: e.querySelector('[data-testid=preflight-fix]')?.textContent ?? '' }));`,
  );

test('not logged in: the Lines banner says so with its fix, a queued line waits, Check lists it', async () => {
  const d = app.driver;
  await embeddedConnected(d);

  // The banner, before any line is queued.
  await d.click('[data-testid=nav-lines]');
  await d.waitFor('[data-testid=preflight-banner]', 60000);
  const banner = await items(d, '[data-testid=preflight-banner]');
  const login = banner.find((i) => i.code === 'agent_login');
  assert.ok(login, JSON.stringify(banner));
  assert.equal(login.level, 'blocking');
  assert.equal(login.scope, 'daemon');
  assert.ok(login.text.includes('Вход агента в аккаунт'), login.text);
  assert.match(login.message, /log/i);
  assert.ok(login.fix.startsWith('Что сделать: ') && login.fix.length > 'Что сделать: '.length + 5, login.fix);
  assert.ok(banner.every((i) => i.level === 'blocking'), JSON.stringify(banner));

  // A line queued now waits, its reason worded by its code and the daemon's text beneath.
  const lineId = await queueLine(d, { project: 'sample', repo, title: 'Заметки', task: 'Write notes.txt.' });
  await d.click(`[data-testid=line-row][data-line-id="${lineId}"]`);
  const reason = await d.until(
    () =>
      d.script(
        "const e = document.querySelector('[data-testid=line-reason-text]'); return e && e.dataset.code ? { code: e.dataset.code, text: e.textContent, raw: document.querySelector('[data-testid=line-reason-raw]')?.textContent ?? '' } : null;",
      ),
    'the line waiting with a reason code',
    30000,
  );
  assert.equal(reason.code, 'preflight', JSON.stringify(reason));
  assert.ok(reason.text.includes('проверка перед запуском не пройдена'), reason.text);
  assert.match(reason.raw, /logged in/i);
  assert.equal(await d.script("return document.querySelector('[data-testid=line-detail]').dataset.state;"), 'queued');
  assert.deepEqual(await d.script("return [...document.querySelectorAll('[data-testid=step-row]')].length;"), 0);
  await screenshot(d, 'preflight-lines-banner');

  // The banner's button leads to Settings, where Check runs the preflight again.
  await d.click('[data-testid=preflight-open-settings]');
  await d.waitFor('[data-testid=preflight-check]');
  // The check is done when the page shows a newer one than before the click (the button is
  // enabled again also before the click is handled at all).
  const checkedAt = () => d.script("return document.querySelector('[data-testid=preflight-checked-at]')?.dataset.at ?? null;");
  const before = await checkedAt();
  await d.click('[data-testid=preflight-check]');
  await d.until(
    async () =>
      ![before, null].includes(await checkedAt()) &&
      (await d.script("return document.querySelector('[data-testid=preflight-check]').disabled;")) === false,
    'the check finished',
  );
  const listed = await items(d, '[data-testid=preflight]');
  const item = listed.find((i) => i.code === 'agent_login');
  assert.ok(item, JSON.stringify(listed));
  assert.equal(item.level, 'blocking');
  assert.ok(item.text.includes('блокирует'), item.text);
  // Blocking items first; the rest (git, the data folder…) are there too.
  assert.equal(listed[0].level, 'blocking');
  assert.ok(listed.some((i) => i.level === 'ok'), JSON.stringify(listed));
  assert.equal(await d.script("return document.querySelector('[data-testid=preflight-error]');"), null);
  await d.script("const s = document.querySelector('.settings'); s.scrollTop = s.scrollHeight;");
  await d.until(
    async () =>
      d.script("const s = document.querySelector('.settings'); return s.scrollTop + s.clientHeight >= s.scrollHeight - 1;"),
    'the settings scrolled to the end',
  );
  await screenshot(d, 'preflight-settings-check');
});

test('Settings show deepwork defaults as placeholders and save nothing for unset numbers', async () => {
  const d = app.driver;
  await d.click('[data-testid=nav-settings]');
  await d.waitFor('[data-testid=steps]');
  const field = (id) =>
    d.script(`const e = document.querySelector('[data-testid=${id}]'); return { value: e.value, placeholder: e.placeholder };`);
  assert.deepEqual(await field('steps'), { value: '', placeholder: '4' });
  assert.deepEqual(await field('timeout'), { value: '', placeholder: '900' });
  await d.script("document.querySelector('[data-testid=steps]').scrollIntoView({ block: 'center' });");
  await d.until(
    async () =>
      d.script(
        "const r = document.querySelector('[data-testid=steps]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;",
      ),
    'the steps field in view',
  );
  await screenshot(d, 'preflight-settings-placeholders');

  await d.type('[data-testid=chat]', 'fast');
  await d.click('[data-testid=save-settings]');
  await d.waitFor('[data-testid=saved]');
  const saved = JSON.parse(fs.readFileSync(deepworkConfig, 'utf8'));
  assert.deepEqual(saved, { bridge: '/opt/orchestro/ask.mjs', chat: 'fast' });
  // Still placeholders after the save.
  assert.deepEqual(await field('steps'), { value: '', placeholder: '4' });
});
