// The Catcher and PlanFix in Settings, over the app's embedded daemon configured (through its
// conveyor.toml) with the mock Telegram Bot API and the mock PlanFix: both shown configured
// with where they go, the outbox empty; «Отправить тестовое сообщение» queues a test message
// that the bot sends exactly once, and the list shows it sent, live on the daemon's events.
// Then the line form's PlanFix task: one that is not a number is refused at its field, a
// number is kept and shown in the line's detail. Screenshots go to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, makeHome, screenshot } from './harness.mjs';
import { embeddedConnected, makeRepo, openLine, startListening } from './support.mjs';

const BOT_TOKEN = '700100:e2e-outbox-token';
const CHAT = 4242;
const PLANFIX_TOKEN = 'pf-e2e-token';

let app;
let dirs;
let repo;
let telegram;
let planfix;

before(async () => {
  dirs = makeHome('outbox');
  repo = path.join(dirs.home, 'sample repo');
  makeRepo(repo, { 'README.md': 'sample\n' });
  telegram = await startListening('mock-telegram.mjs', ['--token', BOT_TOKEN, '--chat', String(CHAT)]);
  planfix = await startListening('mock-planfix.mjs', ['--token', PLANFIX_TOKEN, '--task', '77']);
  // The secrets in files only their owner reads, as the daemon insists.
  const secret = (name, text) => {
    const file = path.join(dirs.home, name);
    fs.writeFileSync(file, `${text}\n`, { mode: 0o600 });
    return file;
  };
  const appData = path.join(dirs.data, 'dev.pult.app');
  fs.mkdirSync(appData, { recursive: true });
  // No agent: no step may start (the preflight blocks on the missing program), so nothing but
  // the test message is ever sent.
  fs.writeFileSync(
    path.join(appData, 'conveyor.toml'),
    [
      `claude_bin = ${JSON.stringify(path.join(dirs.home, 'no-claude'))}`,
      'tick_ms = 100',
      '[catcher]',
      `bot_token_file = ${JSON.stringify(secret('bot-token', BOT_TOKEN))}`,
      `chat_id = ${CHAT}`,
      `api_base = ${JSON.stringify(telegram.url)}`,
      'poll_secs = 1',
      '[planfix]',
      `base_url = ${JSON.stringify(planfix.url)}`,
      `token_file = ${JSON.stringify(secret('planfix-token', PLANFIX_TOKEN))}`,
      '',
    ].join('\n'),
  );
  app = await launch({
    env: { HOME: dirs.home, XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, PULT_NO_KEYRING: '1' },
  });
});

after(async () => {
  await app?.stop();
  telegram?.stop();
  planfix?.stop();
});

const channels = (d) =>
  d.script(
    "return [...document.querySelectorAll('[data-testid=outbox-channel]')].map((e) => ({ channel: e.dataset.channel, configured: e.dataset.configured, text: e.textContent.trim() }));",
  );
const items = (d) =>
  d.script(
    `return [...document.querySelectorAll('[data-testid=outbox-item]')].map((e) => ({
      kind: e.dataset.kind, channel: e.dataset.channel, state: e.dataset.state, held: e.dataset.held,
      stateText: e.querySelector('[data-testid=outbox-item-state]')?.textContent ?? '',
      facts: e.querySelector('[data-testid=outbox-item-facts]')?.textContent ?? '',
      error: e.querySelector('[data-testid=outbox-item-error]')?.textContent ?? null }));`,
  );
const sendMessages = async () => (await telegram.get('/test/sent')).filter((s) => s.method === 'sendMessage');

test('Settings show the Catcher and PlanFix configured; a test message is sent once and shows sent', async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-settings]');
  await d.waitFor('[data-testid=outbox-channel]', 30000);
  assert.deepEqual(await channels(d), [
    { channel: 'telegram', configured: 'true', text: `Кэтчер (Telegram): настроен, чат ${CHAT}` },
    { channel: 'planfix', configured: 'true', text: `ПланФикс: настроен, ${planfix.url}` },
  ]);
  assert.equal(await d.text('[data-testid=outbox-empty]'), 'Сообщений ещё не было.');
  assert.equal(
    await d.script("return document.querySelector('[data-testid=outbox-counts]').dataset.sent;"),
    '0',
  );
  assert.equal(await d.script("return document.querySelector('[data-testid=outbox-test-hint]');"), null);
  assert.deepEqual(await sendMessages(), []);

  assert.equal(await d.text('[data-testid=outbox-test]'), 'Отправить тестовое сообщение');
  await d.click('[data-testid=outbox-test]');
  await d.waitFor('[data-testid=outbox-test-queued]');
  // The daemon sends it in the background; its outbox event brings the new state.
  const sent = await d.until(
    async () => {
      const list = await items(d);
      return list.length === 1 && list[0].state === 'sent' ? list[0] : null;
    },
    'the test message shown sent',
    30000,
  );
  assert.equal(sent.kind, 'test');
  assert.equal(sent.channel, 'telegram');
  assert.equal(sent.stateText, 'отправлено');
  assert.equal(sent.error, null);
  assert.match(sent.facts, /попыток: 1/);
  assert.match(sent.facts, /отправлено /);
  assert.equal(
    await d.script("return document.querySelector('[data-testid=outbox-counts]').dataset.sent;"),
    '1',
  );

  // One message reached the bot, to Anton's chat.
  const once = await sendMessages();
  assert.equal(once.length, 1, JSON.stringify(once));
  assert.equal(String(once[0].chat_id), String(CHAT));
  assert.ok(once[0].plain.trim().length > 0, JSON.stringify(once[0]));
  // And only once: a second test message is queued behind it, and the outbox sends in order,
  // so once the second has reached the bot the sender is past the first for good. Waiting
  // for that, not for a while, is what shows the first was not sent again.
  await d.click('[data-testid=outbox-test]');
  await d.until(
    async () => (await items(d)).filter((i) => i.state === 'sent').length === 2,
    'the second test message shown sent',
  );
  const twice = await sendMessages();
  assert.equal(twice.length, 2, JSON.stringify(twice));
  assert.deepEqual(twice[0], once[0]);

  await d.script("document.querySelector('[data-testid=outbox]').scrollIntoView({ block: 'start' });");
  await d.until(
    async () => d.script("const r = document.querySelector('[data-testid=outbox]').getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight;"),
    'the outbox in view',
  );
  await screenshot(d, 'outbox-settings-sent');
});

test('the line form: a PlanFix task that is not a number is refused at its field; a number is kept and shown', async () => {
  const d = app.driver;
  await d.click('[data-testid=nav-lines]');
  await d.waitFor('[data-testid=line-planfix-task]');
  await d.type('[data-testid=line-planfix-task]', 'PF-77');
  // Refused: the error at the field, worded by the daemon's code, nothing queued.
  await d.type('[data-testid=project-name]', 'sample');
  await d.type('[data-testid=project-repo]', repo);
  await d.click('[data-testid=project-add]');
  await d.waitFor('[data-testid=project-added]');
  await d.type('[data-testid=line-title]', 'Отчёт');
  await d.type('[data-testid=line-task]', 'Write the report.');
  await d.click('[data-testid=line-add]');
  const error = await d.until(
    () =>
      d.script(
        "const e = document.querySelector('[data-testid=line-planfix-error]'); return e ? { text: e.firstChild.textContent, raw: e.querySelector('.raw')?.textContent ?? '', bad: e.previousElementSibling?.classList.contains('bad') } : null;",
      ),
    'the PlanFix task refused at its field',
  );
  assert.equal(error.text, 'Это не номер задачи ПланФикса (например, 1234 или #1234).');
  assert.match(error.raw, /PF-77/);
  assert.equal(error.bad, true);
  assert.equal(await d.script("return document.querySelectorAll('[data-testid=line-row]').length;"), 0);
  await screenshot(d, 'outbox-planfix-task-refused');

  // Corrected: queued with the task, shown in its detail by number.
  await d.script(
    "const i = document.querySelector('[data-testid=line-planfix-task]'); i.value = ''; i.dispatchEvent(new Event('input', { bubbles: true }));",
  );
  await d.type('[data-testid=line-planfix-task]', '#77');
  await d.click('[data-testid=line-add]');
  const id = await d.until(
    () => d.script("const r = document.querySelector('[data-testid=line-row]'); return r ? r.dataset.lineId : null;"),
    'the line in the list',
  );
  // The row can come by the daemon's event before the form has read its own answer: wait for
  // the field's error to go rather than expect it gone the moment the row shows.
  await d.until(
    () => d.script("return document.querySelector('[data-testid=line-planfix-error]') ? null : true;"),
    'the PlanFix task error cleared',
  );
  await openLine(d, id);
  assert.equal(
    await d.until(() => d.script("return document.querySelector('[data-testid=line-detail] [data-testid=line-planfix-task]')?.textContent;"), 'the task in the detail'),
    'Задача ПланФикса #77',
  );
});
