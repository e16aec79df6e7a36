// The never-autonomous guard and the "decided without you" catalogue on the Lines page, with
// the daemon embedded in the app and the real `claude` binary against the scripted Anthropic
// mock. A line's executor journals a decision of its own (`decided`), then tries to publish
// (`npm publish` through Bash): the guard's PreToolUse hook (`conveyord hook guard`, the binary
// beside the app) denies it, nothing runs, and the line waits for Anton's answer to the
// daemon's question. The page shows the denial (the command and its step) in the line's
// detail, and the project's catalogue shows the agent's decision with its why. Screenshots go
// to tests/artifacts/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeHome, screenshot } from './harness.mjs';
import {
  CLAUDE,
  CONVEYORD,
  bash,
  embeddedConnected,
  launchEmbedded,
  makeRepo,
  openLine,
  queueLine,
  startMock,
  text,
  write,
  writePlan,
} from './support.mjs';

const PROJECT = 'guarded';
const DECIDED = { kind: 'decided', text: 'Version 1.2.0 from the changelog', why: 'the changelog names it' };

let app;
let mock;
let dirs;
let repo;

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  if (!fs.existsSync(CONVEYORD)) throw new Error(`${CONVEYORD} is missing: cargo build -p conveyor --bins`);
  dirs = makeHome('guard');
  repo = path.join(dirs.home, 'guarded repo');
  makeRepo(repo, { 'package.json': '{"name": "guarded", "version": "1.1.0"}\n' });
  mock = await startMock();
  // The line's own steps (its id is not known before the page queues it): the planner, then
  // the executor that decides a version, tries to publish, and finishes the rest.
  await mock.script('*', {
    1: [
      writePlan({ level: 'light', steps: [{ title: 'release', task: 'release 1.2.0', checks: [{ cmd: 'test -f done.txt', expect_exit: 0 }] }] }),
      text('planned'),
    ],
    2: [
      bash(`echo '${JSON.stringify(DECIDED)}' >> "$CONVEYOR_JOURNAL"`),
      bash('touch published.sentinel && npm publish'),
      write('done.txt', 'done\n'),
      text('done what I may'),
    ],
  });

  ({ app } = await launchEmbedded(dirs, mock, `hook_bin = ${JSON.stringify(CONVEYORD)}\n`));
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** Every file named `name` under `dir`. */
function findAll(dir, name) {
  const found = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && !e.isSymbolicLink()) found.push(...findAll(p, name));
    else if (e.name === name) found.push(p);
  }
  return found;
}

/** What the selected line's detail shows of the guard, and the catalogue beside it. */
const pageOf = (d) =>
  d.script(`
    const detail = document.querySelector('[data-testid=line-detail]');
    const catalogue = document.querySelector('[data-testid=project-decisions]');
    const squash = (s) => (s ?? '').replace(/\\s+/g, ' ').trim();
    return {
      state: detail?.dataset.state ?? null,
      denials: [...(detail?.querySelectorAll('[data-testid=denial]') ?? [])].map((x) => ({
        step: x.dataset.step,
        tool: x.dataset.tool,
        text: squash(x.querySelector('[data-testid=denial-text]')?.textContent),
        action: x.querySelector('[data-testid=denial-action]')?.title ?? null,
      })),
      region: (() => {
        const s = detail?.querySelector('[data-testid=line-denials]');
        if (!s) return null;
        const h = document.getElementById(s.getAttribute('aria-labelledby'));
        return { tag: s.tagName, label: squash(h?.textContent) };
      })(),
      catalogue: catalogue && {
        project: catalogue.dataset.project,
        label: catalogue.querySelector('ol')?.getAttribute('aria-label') ?? null,
        items: [...catalogue.querySelectorAll('[data-testid=decision]')].map((x) => ({
          source: x.dataset.source,
          line: x.dataset.lineId,
          who: squash(x.querySelector('[data-testid=decision-source]')?.textContent),
          text: squash(x.querySelector('[data-testid=decision-text]')?.textContent),
          why: squash(x.querySelector('[data-testid=decision-why]')?.textContent) || null,
        })),
      },
    };
  `);

test("the guard stops a line's npm publish: the page shows the denial, and the agent's own decision in the project's catalogue", async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');
  const lineId = await queueLine(d, { project: PROJECT, repo, title: 'Релиз', task: 'Release version 1.2.0 to npm.' });
  await openLine(d, lineId);

  // The line waits for Anton: the daemon asked about the denied publish.
  const page = await d.until(
    async () => {
      const p = await pageOf(d);
      return p.state === 'waiting_answer' && p.denials.length > 0 && p.catalogue?.items.length > 0 ? p : null;
    },
    'the line waiting, its denial and the decision on the page',
    240000,
  );
  assert.deepEqual(page.denials, [
    { step: '2', tool: 'Bash', text: 'Защита остановила: touch published.sentinel && npm publish — шаг 2', action: 'touch published.sentinel && npm publish' },
  ]);
  assert.deepEqual(page.region, { tag: 'SECTION', label: 'Остановлено защитой 1' });
  // Nothing of the denied command ran; the rest of the step went on.
  assert.deepEqual(findAll(dirs.data, 'published.sentinel'), []);
  assert.ok(findAll(dirs.data, 'done.txt').length > 0, 'the step went on after the denial');
  // The agent was told why (the hook's reason reached the model).
  const told = (await mock.log()).some((e) => e.line === lineId && (e.after ?? '').includes('never done autonomously'));
  assert.ok(told, 'the model was told why');

  // The catalogue of the line's project: the agent's decision with its why.
  const projectId = await d.script(
    "return [...document.querySelectorAll('[data-testid=decisions-project] option')].find((o) => o.textContent === arguments[0])?.value ?? null;",
    [PROJECT],
  );
  assert.equal(page.catalogue.project, projectId);
  assert.equal(page.catalogue.label, `Решения проекта ${PROJECT}`);
  assert.deepEqual(page.catalogue.items, [
    { source: 'agent', line: lineId, who: 'агент', text: DECIDED.text, why: `Почему: ${DECIDED.why}` },
  ]);
  await screenshot(d, 'guard-denial');

  // The denial is a question for Anton on the morning page, irreversible and expensive.
  await d.click('[data-testid=nav-review]');
  await d.until(
    async () => (await d.texts('[data-testid=question]')).some((t) => t.includes('npm publish')),
    "the daemon's question on the morning page",
  );
  await screenshot(d, 'guard-question');
});
