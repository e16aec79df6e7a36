// Watching a line work, in the real window with the daemon embedded and the real `claude`
// against the scripted Anthropic mock: the executor's run opens by itself as a conversation
// while it goes on (its text as Markdown, a Bash call and a failed Read, each one row with its
// status), a call unfolds to its input and result, `j` and `o` do the same from the keyboard,
// the resume command lands on the X clipboard, and when the held last turn is let through the
// same view shows the rest as it comes and says the run ended. Screenshots go to
// tests/artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeHome, screenshot } from './harness.mjs';
import {
  CLAUDE,
  bash,
  embeddedConnected,
  launchEmbedded,
  makeRepo,
  openLine,
  queueLine,
  startMock,
  text,
  writePlan,
} from './support.mjs';

const PROJECT = 'watch';

let app;
let mock;
let dirs;
let repo;
let agentHome;

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  dirs = makeHome('watch');
  repo = path.join(dirs.home, 'watch repo');
  makeRepo(repo, { 'README.md': 'watch me\n' });
  mock = await startMock();
  await mock.script('*', {
    1: [
      writePlan({ steps: [{ title: 'list', task: 'list the files', size: 'xs', checks: [{ cmd: 'test -f README.md', expect_exit: 0 }] }] }),
      text('planned'),
    ],
    2: [
      { ...bash('printf "alpha\\nbeta\\n"'), say: 'Смотрю **дерево** проекта.' },
      { tool: 'Read', input: { file_path: '{{cwd}}/missing.txt' } },
      { ...text('Готово: файлов **два**.'), hold: true },
    ],
  });
  ({ app, agentHome } = await launchEmbedded(dirs, mock));
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** What the open conversation shows. */
const view = (d) =>
  d.script(`
    const v = document.querySelector('[data-testid=run-view]');
    if (!v) return null;
    return {
      id: v.dataset.runId,
      done: v.dataset.done === 'true',
      outcome: v.dataset.outcome,
      live: !!v.querySelector('[data-testid=run-live]'),
      title: v.querySelector('h4')?.textContent.trim(),
      rows: [...v.querySelectorAll('[data-testid=run-row]')].map((r) => r.dataset.kind),
      tools: [...v.querySelectorAll('[data-testid=run-tool]')].map((t) => [t.dataset.tool, t.dataset.status]),
      texts: [...v.querySelectorAll('[data-testid=run-row] .md')].map((m) => m.innerHTML.trim()),
      resume: v.querySelector('[data-testid=run-resume]')?.textContent ?? null,
      cost: v.querySelector('[data-testid=run-cost]')?.textContent ?? null,
    };
  `);

test("a step's conversation, live: its calls unfold, the resume command is copied, the end comes in by itself", async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');
  const lineId = await queueLine(d, { project: PROJECT, repo, title: 'Посмотреть', task: 'List the files.' });
  await openLine(d, lineId);

  // The executor is held on its last turn: its run is open, with the text and both calls.
  const held = await d.until(
    async () => (await mock.log()).find((e) => e.line === lineId && e.held),
    'the executor held by the mock',
    180000,
  );
  // The line is followed: its running run, the executor's, is open; opened by hand, it stays.
  await d.waitFor('[data-testid=run-item][data-n="2"][data-outcome=running][aria-pressed=true]');
  await d.click('[data-testid=run-item][data-n="2"]');
  await d.until(
    async () => (await d.findAll('[data-testid=run-item][data-n="2"][aria-pressed=true]')).length === 1,
    "the executor's run still open, now chosen",
  );
  const live = await d.until(async () => {
    const v = await view(d);
    return v?.title?.startsWith('Шаг 2') && v.tools.length === 2 && v.tools.every(([, s]) => s !== 'running') ? v : null;
  }, "the executor's calls and their results on the page", 60000).catch(async (e) => {
    console.log(await d.script("return document.querySelector('[data-testid=line-detail]')?.innerText"));
    throw e;
  });
  assert.equal(live.outcome, 'running');
  assert.ok(live.live && !live.done);
  assert.deepEqual(live.tools, [
    ['Bash', 'ok'],
    ['Read', 'error'],
  ]);
  assert.deepEqual(live.rows, ['text', 'tool', 'tool']);
  assert.equal(live.texts[0], '<p>Смотрю <strong>дерево</strong> проекта.</p>');
  assert.match(live.cost, /^Потрачено: \$0\.\d+$/);
  assert.notEqual(live.cost, 'Потрачено: $0.00');
  await screenshot(d, 'watch-live');

  // A call unfolds to its input and its result, by a click and by the keys.
  await d.click('[data-testid=run-tool][data-tool=Bash]');
  const io = await d.waitFor('[data-testid=run-tool-output]');
  assert.ok(io);
  assert.equal(await d.text('[data-testid=run-tool-output]'), 'alpha\nbeta');
  assert.match(await d.text('[data-testid=run-tool-input]'), /printf/);
  await d.script("document.querySelector('[data-testid=run-scroller]').focus();");
  await d.keys('j', 'o');
  await d.until(
    async () => (await d.texts('[data-testid=run-tool-output]')).some((t) => t.includes('does not exist')),
    "the failed Read's result unfolded by j and o",
  );

  // The resume command: the line's worktree, the agent's own home, the line's session.
  assert.ok(live.resume.startsWith('cd ') && live.resume.includes(`/worktrees/${lineId} && `), live.resume);
  assert.ok(live.resume.includes(`HOME=${agentHome} `) || live.resume.includes(`HOME='${agentHome}' `), live.resume);
  assert.ok(live.resume.endsWith(` --resume ${held.session}`), live.resume);
  await d.click('[data-testid=run-copy]');
  await d.until(async () => (await d.script("return document.querySelector('[data-testid=run-copy]').dataset.copied;")) === 'yes', 'copied');
  const clipboard = await d.until(() => {
    try {
      return execFileSync('xclip', ['-o', '-selection', 'clipboard'], { encoding: 'utf8', timeout: 5000 });
    } catch {
      return null;
    }
  }, 'the command on the X clipboard');
  assert.equal(clipboard, live.resume);

  // Let the last turn through: the same view shows it and says the run ended. Two reads say
  // so, the transcript's `done` and the run's outcome (the line's runs, reloaded on the step's
  // event): the view is waited on until both have come, and fails if either never does.
  await mock.release(held.session);
  const end = await d.until(async () => {
    const v = await view(d);
    return v?.done && v.outcome !== 'running' ? v : null;
  }, 'the run ended in the open view, its outcome too', 120000);
  assert.equal(end.id, live.id, 'the same run stays open');
  assert.ok(!end.live);
  assert.deepEqual(end.rows.slice(-2), ['text', 'result']);
  assert.ok(end.texts.includes('<p>Готово: файлов <strong>два</strong>.</p>'), end.texts.join('\n'));
  await screenshot(d, 'watch-ended');
});
