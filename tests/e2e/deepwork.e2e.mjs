// The golden path of the Deepwork page, in the real app under Xvfb through tauri-driver and
// WebKitWebDriver, with the fake bridge: open a folder given on the command line, tick a
// file, ask, watch step lines arrive while the run is still going, see the answer, write the
// proposed file (checked on disk with its backup), switch the language. Screenshots of each
// page go to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, launch, makeHome, screenshot } from './harness.mjs';

const ASK_MJS = `// the bridge (sample)
async function waitForAnswer(page) {
  let streaming = true;
  while (streaming) streaming = !(await page.done());
  return 'done';
}
`;
const NEW_ASK_MJS = ASK_MJS.replace("return 'done';", "return 'done'; // checked");

let app;
let dirs;
let project;
let gate;
let bridgeLog;

before(async () => {
  dirs = makeHome('deepwork');
  project = path.join(dirs.home, 'мой проект #1');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'ask.mjs'), ASK_MJS);
  fs.writeFileSync(path.join(project, 'ui.html'), '<button id="send">Send</button>\n');
  fs.writeFileSync(path.join(project, 'src', 'util.mjs'), 'export const x = 1;\n');
  gate = path.join(dirs.home, 'go');
  bridgeLog = path.join(dirs.home, 'bridge.log');
  const scenario = path.join(dirs.home, 'scenario.json');
  fs.writeFileSync(
    scenario,
    JSON.stringify({
      steps: [
        { answer: 'Let me look.\n```\n=== FIND: waitForAnswer ===\n```\n' },
        {
          wait_for: 'go',
          answer:
            'It is `waitForAnswer` in **ask.mjs**, line 2.\n\n=== FILE: ask.mjs ===\n```js\n' +
            NEW_ASK_MJS +
            '```\n=== END FILE ===\n',
        },
        // The third call (the Stop test's run) never answers.
        { hang: true },
      ],
    }),
  );
  fs.mkdirSync(path.join(dirs.config, 'deepwork'), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.config, 'deepwork', 'config.json'),
    JSON.stringify({ bridge: path.join(ROOT, 'tests', 'fixtures', 'fake-bridge.mjs'), steps: 4 }),
  );
  app = await launch({
    env: {
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      FAKE_BRIDGE_SCENARIO: scenario,
      FAKE_BRIDGE_LOG: bridgeLog,
    },
    args: [project],
  });
});

after(async () => {
  await app?.stop();
});

test('the Deepwork golden path', async () => {
  const d = app.driver;

  // The folder from the command line is open, its tree shown.
  await d.until(async () => (await d.text('[data-testid=folder-name]')).includes('мой проект #1'), 'folder name');
  await d.waitFor('.row[data-path="ui.html"]');
  await screenshot(d, 'deepwork-folder');

  // Tick a file: the selection's size appears before sending.
  await d.click('.row[data-path="ui.html"] input[type=checkbox]');
  await d.until(async () => (await d.text('[data-testid=selection-size]')).includes('символов: 32'), 'selection size');

  await d.type('[data-testid=question]', 'Где решается, что ответ дописан?');
  await d.click('[data-testid=run]');

  // Step lines arrive while the run is still going (the bridge waits for the gate).
  const lines = await d.until(async () => {
    const l = await d.texts('[data-testid=step-line]');
    return l.some((x) => x.includes('FIND waitForAnswer')) && l.some((x) => x.startsWith('Шаг 2')) ? l : null;
  }, 'step lines of a running run');
  assert.ok(lines[0].startsWith('Шаг 1'), lines.join('\n'));
  assert.equal((await d.findAll('[data-testid=answer]')).length, 0, 'no answer before the bridge answers');
  assert.equal((await d.findAll('[data-testid=stop]')).length, 1, 'Stop is offered while running');
  await screenshot(d, 'deepwork-running');

  fs.writeFileSync(gate, '');
  await d.until(async () => (await d.texts('[data-testid=answer]')).join('').includes('waitForAnswer'), 'answer');
  const shown = (await d.texts('[data-testid=answer]')).join('');
  assert.ok(!shown.includes('=== FILE') && shown.includes('ask.mjs'), `the file is named, not repeated: ${shown}`);
  const log = fs.readFileSync(bridgeLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(log.length, 2);
  assert.ok(log[0].input.includes('<button id="send">Send</button>'), 'the ticked file was sent');
  assert.ok(log[0].input.trimEnd().endsWith('Где решается, что ответ дописан?'), 'the question ends the message');
  assert.deepEqual([log[0].new, log[1].new], [false, true]);
  assert.ok(log[1].input.includes('ask.mjs:2: async function waitForAnswer(page) {'), 'FIND results sent');
  await screenshot(d, 'deepwork-answer');

  // Write the proposed file; the result names the backup.
  await d.click('[data-testid=proposed-file][data-path="ask.mjs"] [data-testid=write]');
  const result = await d.until(async () => {
    const t = await d.texts('[data-testid=write-result]');
    return t.find((x) => x.includes('backup/'));
  }, 'write result');
  assert.equal(fs.readFileSync(path.join(project, 'ask.mjs'), 'utf8'), NEW_ASK_MJS);
  const backup = result.match(/backup\/\S+/)[0];
  assert.equal(fs.readFileSync(path.join(project, backup), 'utf8'), ASK_MJS);
  await screenshot(d, 'deepwork-written');

  // The run is in the history.
  await d.click('[data-testid=history-toggle]');
  await d.until(async () => (await d.text('[data-testid=history]')).includes('Где решается'), 'history entry');

  // Switch to English.
  assert.equal(await d.text('[data-testid=nav-settings]'), 'Настройки');
  await d.script(
    "const s = document.querySelector('[data-testid=language]'); s.value = 'en'; s.dispatchEvent(new Event('change', { bubbles: true }));",
  );
  await d.until(async () => (await d.text('[data-testid=nav-settings]')) === 'Settings', 'English navigation');
  assert.ok((await d.texts('[data-testid=step-line]'))[0].startsWith('Step 1'));
  await screenshot(d, 'deepwork-english');

  // The Settings page shows the saved transport.
  await d.click('[data-testid=nav-settings]');
  await d.waitFor('[data-testid=bridge]');
  const bridge = await d.script("return document.querySelector('[data-testid=bridge]').value;");
  assert.ok(bridge.endsWith('fake-bridge.mjs'), bridge);
  await screenshot(d, 'settings');
});

test('the tree follows the disk, and Stop ends a run and its bridge', async () => {
  const d = app.driver;
  await d.click('[data-testid=nav-deepwork]');
  await d.waitFor('[data-testid=file-tree]');

  // A file created on disk shows up in the tree by itself.
  fs.writeFileSync(path.join(project, 'added.txt'), 'new\n');
  await d.waitFor('.row[data-path="added.txt"]');

  // A run whose bridge never answers: Stop ends it and kills the bridge.
  await d.script("const q = document.querySelector('[data-testid=question]'); q.value = ''; q.dispatchEvent(new Event('input', { bubbles: true }));");
  await d.type('[data-testid=question]', 'and then?');
  await d.click('[data-testid=run]');
  const call = await d.until(() => {
    const lines = fs.readFileSync(bridgeLog, 'utf8').trim().split('\n');
    return lines.length >= 3 ? JSON.parse(lines[2]) : null;
  }, 'the third bridge call');
  assert.ok(fs.existsSync(`/proc/${call.pid}`), 'the bridge is running');
  await d.click('[data-testid=stop]');
  await d.waitFor('[data-testid=run]');
  await d.until(async () => (await d.text('[data-testid=error]')).length > 0, 'the stopped run says so');
  await d.until(() => !isAlive(call.pid), `bridge ${call.pid} to be gone`);
  await screenshot(d, 'deepwork-stopped');
});

/** Whether a process exists and is not a zombie. */
function isAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
