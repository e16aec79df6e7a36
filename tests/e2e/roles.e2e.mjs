// A line's chain of roles on the Lines page, with the daemon embedded in the app and the real
// `claude` binary against the scripted Anthropic mock. The project has its own reviewer
// (`.claude/agents/code-reviewer.md` on main); a line at level medium runs planner → executor
// → tester → reviewer, whose `rework` (with a finding) queues a fixer in the line's session, then
// tester → reviewer again, which passes, and the line merges. The page shows each step with its
// role, the checking roles' own sessions, the agent they ran as ("code-reviewer", or the built-in
// prompt), their verdicts and the finding, the level and why, and while the fixer works the
// round ("round 1 of 3"). Then a second line is held in its executor and its level raised from
// the page: only higher levels are offered, and the page shows the new level and that Anton
// raised it. Screenshots go to tests/artifacts/.
//
// Why the rework is seen while it is live: the fixer's first turn is held by the mock
// (`hold: true`) until the test releases the line's session (read from the mock's log).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeHome, screenshot } from './harness.mjs';
import {
  CLAUDE,
  bash,
  embeddedConnected,
  git,
  launchEmbedded,
  makeRepo,
  openLine,
  queueLine,
  queueLineOn,
  roleVerdict,
  startMock,
  text,
  write,
  writePlan,
} from './support.mjs';

const REVIEWER =
  '---\nname: code-reviewer\ndescription: Reviews the line\'s code\ntools: Read, Grep, Glob, Bash\n---\n' +
  'You are the PROJECT-REVIEWER-FROM-MAIN. Review the diff.\n';
const FINDING = { path: 'hello.txt', line: 1, text: 'typo: helo should be hello' };
const PROJECT = 'roles';

let app;
let mock;
let dirs;
let repo;

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  dirs = makeHome('roles');
  repo = path.join(dirs.home, 'roles repo');
  makeRepo(repo, { 'README.md': 'greetings\n', '.claude/agents/code-reviewer.md': REVIEWER });
  mock = await startMock();
  // The line's own steps (the checking roles skip session "*"): step 3 is the tester, 4 the
  // reviewer, 5 the fixer (held until the test has looked), 6 the tester, 7 the reviewer.
  await mock.script('*', {
    1: [
      writePlan({
        level: 'medium',
        steps: [{ title: 'greet', task: 'write hello.txt', size: 's', checks: [{ cmd: 'test -f hello.txt', expect_exit: 0 }] }],
      }),
      text('planned'),
    ],
    2: [write('hello.txt', 'helo\n'), text('written')],
    5: [{ ...write('hello.txt', 'hello\n'), hold: true }, text('fixed the typo')],
  });
  // Every reviewer run (the line's id is not known yet); the tester is left to pass.
  await mock.scriptKind('reviewer', {
    4: [bash('git diff --stat HEAD~1'), roleVerdict('rework', [FINDING]), text('sent back')],
    7: [bash('cat hello.txt'), roleVerdict('pass'), text('good')],
  });

  ({ app } = await launchEmbedded(dirs, mock));
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** What the selected line's detail shows of its chain and level. */
const chainOf = (d) =>
  d.script(`
    const detail = document.querySelector('[data-testid=line-detail]');
    if (!detail) return null;
    const level = detail.querySelector('[data-testid=line-level]');
    return {
      state: detail.dataset.state,
      steps: [...detail.querySelectorAll('[data-testid=step-row]')].map((r) => [r.dataset.kind, r.dataset.state]),
      roles: [...detail.querySelectorAll('[data-testid=step-role]')].map((r) => ({
        n: Number(r.dataset.n),
        kind: r.dataset.kind,
        agent: r.querySelector('[data-testid=step-agent]')?.textContent.trim() ?? null,
        verdict: r.dataset.verdict,
        session: r.querySelector('[data-testid=step-session]')?.title ?? null,
        findings: [...r.querySelectorAll('[data-testid=finding]')].map((f) => f.textContent.trim()),
      })),
      level: level?.dataset.level ?? null,
      rounds: Number(level?.dataset.rounds ?? 0),
      roundsText: detail.querySelector('[data-testid=line-rounds]')?.textContent.trim() ?? null,
      why: detail.querySelector('[data-testid=line-level-why]')?.textContent.trim() ?? null,
      offered: [...detail.querySelectorAll('[data-testid=level-raise-to]')].map((b) => b.dataset.level),
    };
  `);

test("a medium line's chain: the project's reviewer sends it back, a fixer mends it, the reviewer passes it", async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');
  const lineId = await queueLine(d, { project: PROJECT, repo, title: 'Приветствие', task: 'Write hello.txt with a greeting.' });
  await openLine(d, lineId);

  // The reviewer sent it back: the fixer runs (held) in round 1 of 3, the finding on the page.
  const held = await d.until(
    async () => (await mock.log()).find((e) => e.line === lineId && e.step_kind === 'fixer' && e.held),
    'the fixer held by the mock',
    180000,
  );
  // One snapshot of the detail that shows all of it: the rework, its round and the fixer
  // running (a reload between the reviewer's verdict and the fixer's start shows the first two
  // alone).
  const live = await d.until(async () => {
    const c = await chainOf(d);
    const fixing = c?.state === 'fixing' && JSON.stringify(c.steps.at(-1)) === JSON.stringify(['fixer', 'running']);
    return fixing && c.rounds === 1 && c.roles.some((r) => r.verdict === 'rework') ? c : null;
  }, 'the rework, its round and the fixer running on the page');
  assert.equal(live.state, 'fixing');
  assert.equal(live.roundsText, 'раунд 1 из 3');
  assert.deepEqual(live.steps.at(-1), ['fixer', 'running']);
  const rework = live.roles.find((r) => r.kind === 'reviewer');
  assert.deepEqual(
    { n: rework.n, agent: rework.agent, verdict: rework.verdict, findings: rework.findings },
    { n: 4, agent: 'агент code-reviewer', verdict: 'rework', findings: ['hello.txt:1: typo: helo should be hello'] },
  );
  // The row's rounds come from the list, a load of its own.
  await d.until(
    async () => (await d.texts('[data-testid=line-row-rounds]')).some((t) => t.includes('раунд 1 из 3')),
    'the round on the row of the line',
  );
  await screenshot(d, 'roles-rework');
  await mock.release(held.session);

  // The fixed line passes the second round and merges; the whole chain stays on the page.
  await d.until(async () => (await chainOf(d))?.state === 'awaiting_acceptance', 'awaiting acceptance', 180000);
  const done = await chainOf(d);
  assert.deepEqual(done.steps, [
    ['planner', 'done'],
    ['executor', 'done'],
    ['tester', 'done'],
    ['reviewer', 'done'],
    ['fixer', 'done'],
    ['tester', 'done'],
    ['reviewer', 'done'],
  ]);
  assert.deepEqual(
    done.roles.map(({ n, kind, agent, verdict, findings }) => ({ n, kind, agent, verdict, findings })),
    [
      { n: 3, kind: 'tester', agent: 'встроенный промпт', verdict: 'pass', findings: [] },
      { n: 4, kind: 'reviewer', agent: 'агент code-reviewer', verdict: 'rework', findings: ['hello.txt:1: typo: helo should be hello'] },
      { n: 6, kind: 'tester', agent: 'встроенный промпт', verdict: 'pass', findings: [] },
      { n: 7, kind: 'reviewer', agent: 'агент code-reviewer', verdict: 'pass', findings: [] },
    ],
  );
  // Each checking run had a session of its own, as the mock saw it, never the line's.
  const log = (await mock.log()).filter((e) => e.kind === 'messages' && e.line === lineId);
  const sessionOf = (n) => log.find((e) => e.step === n)?.session;
  for (const r of done.roles) assert.equal(r.session, sessionOf(r.n), `step ${r.n}'s session`);
  assert.equal(new Set(done.roles.map((r) => r.session)).size, 4);
  assert.ok(!done.roles.some((r) => r.session === held.session), 'no checker ran in the line session');
  const shown = await d.texts('[data-testid=step-session]');
  assert.ok(shown.includes(`сессия ${sessionOf(4).slice(0, 8)}`), shown.join(', '));
  // The reviewer ran as the project's agent (its prompt from main), the tester did not.
  assert.ok(log.filter((e) => e.step_kind === 'reviewer').every((e) => e.system_tail.includes('PROJECT-REVIEWER-FROM-MAIN')));
  assert.ok(!log.find((e) => e.step_kind === 'tester').system_tail.includes('PROJECT-REVIEWER'));

  // The level and why; the rounds reset once merged; nothing to raise after the checks.
  assert.equal(done.level, 'medium');
  assert.equal(done.why, 'почему: the planner chose it');
  assert.equal(done.rounds, 0);
  assert.equal(done.roundsText, null);
  assert.deepEqual(done.offered, []);
  assert.equal((await d.text('[data-testid=line-level-name]')).trim(), 'Уровень: средний');
  // The planner's size of the executor's step, beside its title (the plan passed the hook).
  const sized = await d.script(
    "return [...document.querySelectorAll('[data-testid=step-row]')].filter((r) => r.querySelector('[data-testid=step-size]')).map((r) => [r.dataset.kind, r.querySelector('[data-testid=step-size]').textContent, r.querySelector('[data-testid=step-size]').title]);",
  );
  assert.deepEqual(sized, [['executor', 'S', 'Размер шага по оценке постановщика: S. По нему бюджет оценивает шаг до запуска.']]);
  assert.equal(git(repo, 'show', 'main:hello.txt'), 'hello\n');
  await screenshot(d, 'roles-chain');
});

test('the level is raised from the page: only higher levels are offered, and why says Anton', async () => {
  const d = app.driver;
  // A second line of the project, planned light, whose executor the mock holds: it stays
  // running while the test raises its level.
  await mock.script('*', {
    1: [writePlan({ level: 'light', steps: [{ title: 'wait', task: 'wait', checks: [] }] }), text('planned')],
    2: [{ text: 'working', hold: true }],
  });
  const lineId = await queueLineOn(d, { project: PROJECT, title: 'Уровень', task: 'Wait while Anton raises the level.' });
  await openLine(d, lineId);
  const light = await d.until(async () => {
    const c = await chainOf(d);
    return c?.state === 'running' && c.level === 'light' ? c : null;
  }, 'the second line running at light', 120000);
  assert.equal(light.why, 'почему: the planner chose it');
  assert.deepEqual(light.offered, ['medium', 'full']);
  const group = await d.script(
    "const g = document.querySelector('[data-testid=level-raise]'); return { role: g.getAttribute('role'), label: g.getAttribute('aria-label'), buttons: [...g.querySelectorAll('button')].map((b) => b.getAttribute('aria-label')) };",
  );
  assert.deepEqual(group, {
    role: 'group',
    label: 'Поднять уровень',
    buttons: [
      'Поднять уровень до «средний»: исполнитель, тесты, клики и ревьюер',
      'Поднять уровень до «полный»: исполнитель, тесты, клики, ревьюер, скептик и доп. проверки',
    ],
  });

  await d.click('[data-testid=level-raise-to][data-level=medium]');
  const medium = await d.until(async () => {
    const c = await chainOf(d);
    return c?.level === 'medium' ? c : null;
  }, 'the level raised to medium');
  assert.equal(medium.why, 'почему: Anton raised it');
  assert.deepEqual(medium.offered, ['full']);
  assert.equal(await d.text('[data-testid=line-row][data-line-id="' + lineId + '"] [data-testid=line-row-level]'), 'средний');
  // The daemon journaled the raise with its reason.
  await d.until(
    async () => (await d.texts('[data-testid=journal-entry]')).some((t) => t.includes('the level is medium') && t.includes('Anton raised it')),
    'the raise in the journal',
  );
  await screenshot(d, 'roles-level-raised');

  await d.click('[data-testid=level-raise-to][data-level=full]');
  const full = await d.until(async () => {
    const c = await chainOf(d);
    return c?.level === 'full' ? c : null;
  }, 'the level raised to full');
  assert.deepEqual(full.offered, []);
  assert.equal(await d.script("return document.querySelector('[data-testid=level-raise]');"), null);
  assert.equal(full.state, 'running');
});
