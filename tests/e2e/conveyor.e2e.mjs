// The conveyor pages with the daemon embedded in the app (the default on a fresh machine) and
// the real `claude` binary against the scripted Anthropic mock: queue a line on a fresh
// repository through the queue forms, watch it wait for Anton's answer on the Lines page once
// the judge has validated its question, answer it on the Review page, watch the answer carried
// to the line's session and the line reach awaiting acceptance, send remarks and see the same
// session run again (the mock sees the answer and the remarks) and merge again, then accept and
// check that the branch and worktree are gone. Screenshots of each page go to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, makeHome, screenshot } from './harness.mjs';
import {
  CLAUDE,
  agentEnvToml,
  bash,
  embeddedConnected,
  git,
  judgeVerdict,
  makeRepo,
  openLine,
  queueLine,
  startMock,
  text,
  writePlan,
} from './support.mjs';

const QUESTION = {
  kind: 'question',
  text: 'Keep notes.txt in the repository?',
  options: ['yes', 'no'],
  default: 'yes',
  why: 'they may be scratch',
  reversible: true,
  expensive: false,
};
const DECIDED = { kind: 'decided', text: 'notes are plain text', why: 'simplest' };
const VERDICT_WHY = 'only Anton knows whether notes belong in git';

let app;
let mock;
let dirs;
let repo;
let daemonData;

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  dirs = makeHome('conveyor');
  repo = path.join(dirs.home, 'sample repo');
  makeRepo(repo, {
    'README.md': 'sample\n',
    '.conveyor.toml': 'regression = "test -f notes.txt"\n',
  });
  mock = await startMock();
  // Every session plays this script: the line's id and session are made by the app. Step 3 is
  // the judge's run (a session of its own) after the step that journaled; it validates the
  // question, so the line waits for the answer, which step 4 carries; step 5 is the tester (a
  // session of its own, which passes unscripted), step 6 the remarks and 7 the tester again.
  await mock.script('*', {
    1: [
      writePlan({
        level: 'light',
        steps: [{ title: 'notes', task: 'write notes.txt', checks: [{ cmd: 'test -f notes.txt', expect_exit: 0 }] }],
      }),
      text('planned'),
    ],
    2: [
      bash(
        'printf \'fn main() {\\n    println!("notes");\\n}\\n\' > notes.rs && echo notes > notes.txt && ' +
          `echo '${JSON.stringify(QUESTION)}' >> "$CONVEYOR_JOURNAL" && ` +
          `echo '${JSON.stringify(DECIDED)}' >> "$CONVEYOR_JOURNAL"`,
      ),
      text('notes written'),
    ],
    3: [judgeVerdict([[QUESTION.text, 'validated', VERDICT_WHY]]), text('judged')],
    4: [text('answer taken: nothing to change')],
    6: [bash("echo 'more notes' >> notes.txt"), text('remarks done')],
  });
  // The embedded daemon's own config file, beside the app's data (Settings names it).
  const appData = path.join(dirs.data, 'dev.pult.app');
  daemonData = path.join(appData, 'conveyor');
  fs.mkdirSync(appData, { recursive: true });
  const agentHome = path.join(dirs.home, 'agent-home');
  fs.mkdirSync(agentHome);
  fs.writeFileSync(
    path.join(appData, 'conveyor.toml'),
    `claude_bin = ${JSON.stringify(CLAUDE)}\ntick_ms = 100\nagent_env_inherit = false\nstep_timeout_secs = 300\n` +
      agentEnvToml(mock, agentHome),
  );
  app = await launch({
    env: {
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      PULT_NO_KEYRING: '1',
    },
  });
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** The selected line's state on the Lines page. */
const detailState = (d) => d.script("return document.querySelector('[data-testid=line-detail]')?.dataset.state ?? null;");

test('a line queued in the app runs with the embedded daemon, is answered, remarked and accepted', async () => {
  const d = app.driver;
  await embeddedConnected(d);

  // Queue: a project, then a line on it.
  await d.click('[data-testid=nav-lines]');
  const lineId = await queueLine(d, { project: 'sample', repo, title: 'Заметки', task: 'Write notes.txt and notes.rs.' });
  await openLine(d, lineId);

  // Live over the event stream: the judge validates the question and the line waits for the
  // answer, with no reload.
  await d.until(async () => (await detailState(d)) === 'waiting_answer', 'waiting for the answer', 180000);
  await d.until(
    async () => (await d.script("return document.querySelector('[data-testid=line-reason-text]')?.dataset.code ?? null;")) === 'waiting_answer',
    'the reason: waiting for the answer',
  );
  const judged = await d.script("return [...document.querySelectorAll('[data-testid=step-row]')].map((r) => r.dataset.state);");
  assert.deepEqual(judged, ['done', 'done', 'done']);
  const waiting = await d.text('[data-testid=line-detail]');
  assert.ok(waiting.includes('постановщик') && waiting.includes('исполнитель') && waiting.includes('судья'), waiting);
  const journal = await d.texts('[data-testid=journal-entry]');
  assert.ok(journal.some((t) => t.includes(QUESTION.text)), journal.join('\n'));
  await screenshot(d, 'conveyor-lines-waiting');

  // The morning page: live (no night configured), the question with the judge's reason and its
  // options on buttons, the decided list collapsed.
  await d.click('[data-testid=nav-review]');
  const q = await d.until(
    () => d.script("const q = [...document.querySelectorAll('[data-testid=question]')].find((e) => e.textContent.includes(arguments[0])); return q ? q.dataset.questionId : null;", [QUESTION.text]),
    'the question on the Review page',
  );
  const card = await d.script(
    "const q = document.querySelector(`[data-testid=question][data-question-id=\"${arguments[0]}\"]`); return { status: q.dataset.status, kind: q.dataset.kind, verdict: q.querySelector('[data-testid=question-verdict]')?.textContent ?? null, options: [...q.querySelectorAll('[data-testid=option-button]')].map((b) => b.dataset.option) };",
    [q],
  );
  assert.deepEqual({ ...card, verdict: card.verdict?.trim() }, { status: 'validated', kind: 'question', verdict: `Судья: ${VERDICT_WHY}`, options: ['yes', 'no'] });
  assert.equal(await d.script("return document.querySelector('[data-testid=review-freeze]').dataset.state;"), 'live');
  assert.equal(await d.script("return document.querySelector('[data-testid=decided-list]').open;"), false);
  assert.ok((await d.script("return document.querySelector('[data-testid=decided-list]').textContent;")).includes(DECIDED.text));
  await screenshot(d, 'conveyor-review');
  await d.click(`[data-testid=question][data-question-id="${q}"] [data-testid=option-button][data-option="no"]`);
  await d.until(
    async () => (await d.script(`return document.querySelector('[data-testid=question][data-question-id="${q}"]')?.dataset.status;`)) === 'answered',
    'the question answered',
  );
  await screenshot(d, 'conveyor-review-answered');

  // The answer is carried to the line's session (an `answer` step); the line passes the gate,
  // merges and waits for acceptance.
  await d.click('[data-testid=nav-lines]');
  await openLine(d, lineId);
  await d.until(async () => (await detailState(d)) === 'awaiting_acceptance', 'awaiting acceptance', 180000);
  const steps = await d.script("return [...document.querySelectorAll('[data-testid=step-row]')].map((r) => r.dataset.state);");
  assert.deepEqual(steps, ['done', 'done', 'done', 'done', 'done']);
  const files = await d.until(async () => {
    const f = await d.script("return [...document.querySelectorAll('[data-testid=diff-file]')].map((e) => e.dataset.path);");
    return f.length >= 2 ? f.sort() : null;
  }, 'the branch diff');
  assert.deepEqual(files, ['notes.rs', 'notes.txt']);
  // The Rust file's diff is highlighted (highlight.js spans), its text intact.
  const rust = await d.script(
    "const f = document.querySelector('[data-testid=diff-file][data-path=\"notes.rs\"]'); return { hl: f.querySelectorAll('[class*=hljs-]').length, text: f.textContent };",
  );
  assert.ok(rust.hl > 0 && rust.text.includes('println!("notes")'), JSON.stringify(rust));
  await d.waitFor('[data-testid=budget-pool][data-kind=window]');
  await screenshot(d, 'conveyor-lines');

  // Remarks: the same session runs again, carrying the answer and the remarks, and merges.
  // The judge's and the tester's requests (sessions of their own) are left out.
  const ofLine = (e) => e.kind === 'messages' && !e.side && !['judge', 'tester'].includes(e.step_kind);
  const before = (await mock.log()).filter(ofLine).length;
  await d.waitFor('[data-testid=remarks-text]');
  await d.type('[data-testid=remarks-text]', 'Add a second line to notes.txt');
  await d.click('[data-testid=remarks-send]');
  await d.until(async () => (await detailState(d)) !== 'awaiting_acceptance', 'the line leaves awaiting acceptance');
  await d.until(async () => (await detailState(d)) === 'awaiting_acceptance', 'awaiting acceptance again', 180000);
  await d.until(async () => (await d.findAll('[data-testid=step-row]')).length === 7, 'the remarks step and its check listed');
  const log = (await mock.log()).filter(ofLine);
  const sessions = new Set(log.map((e) => e.session));
  assert.equal(sessions.size, 1, `one session for the whole line: ${[...sessions]}`);
  const remarks = log.slice(before);
  assert.ok(remarks.length > 0 && remarks.every((e) => e.step === 6), JSON.stringify(remarks.map((e) => e.step)));
  const convo = remarks[0].conversation;
  assert.ok(convo.includes('conveyor step 2 attempt 1'), 'the resumed session carries the earlier steps');
  assert.ok(convo.includes('Add a second line to notes.txt'), 'the remarks reached the session');
  assert.ok(convo.includes(`- Q: ${QUESTION.text}\n  A: no`), 'the answer reached the session');
  assert.equal(fs.readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'notes\nmore notes\n');

  // Accept: the branch and the worktree are gone from the repository.
  await d.click('[data-testid=accept-button]');
  await d.until(async () => (await detailState(d)) === 'accepted', 'accepted');
  assert.equal(git(repo, 'branch', '--list', 'line/*').trim(), '');
  assert.ok(!git(repo, 'worktree', 'list').includes(lineId), git(repo, 'worktree', 'list'));
  assert.ok(!fs.existsSync(path.join(daemonData, 'worktrees', lineId)));
  await screenshot(d, 'conveyor-accepted');
});
