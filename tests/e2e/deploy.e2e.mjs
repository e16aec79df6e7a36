// A line's deploys on the Lines page, with the daemon embedded in the app and the real
// `claude` binary against the scripted Anthropic mock. The project's `.conveyor.toml` on main
// names a deploy (it writes the deployed commit to a release marker), a health check (reads
// `health.txt` of the deployed commit) and a rollback (puts the previous commit back). The
// line's executor breaks `health.txt`: after the merge the deploy runs, both health tries are
// red, the rollback runs and the line investigates in its session (the `investigate` step held
// by the mock until the test has looked). The page shows the deploy rolled back, in words, with
// its commit and the previous one, its output folded, and each health try red with its output.
// Released, the investigation mends `health.txt`, the line passes the gate again, deploys
// green and awaits acceptance; the page shows both deploys, the green one first.
// Screenshots go to tests/artifacts/.
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
  git,
  launchEmbedded,
  makeRepo,
  openLine,
  queueLine,
  startMock,
  text,
  writePlan,
} from './support.mjs';

const PROJECT = 'deployed';

let app;
let mock;
let dirs;
let repo;
let releases;

/** The project's checklist: deploy, health check and rollback around a release marker. */
function checklist(r) {
  const q = JSON.stringify;
  return [
    `deploy = ${q(`echo $CONVEYOR_COMMIT > '${r}/current' && echo "deployed $CONVEYOR_COMMIT"`)}`,
    `health_check = ${q('grep -qx ok health.txt || { echo "health.txt says $(cat health.txt)"; exit 1; }')}`,
    `rollback = ${q(`echo $CONVEYOR_PREVIOUS_COMMIT > '${r}/current' && echo "rolled back to $CONVEYOR_PREVIOUS_COMMIT"`)}`,
    'health_retries = 2',
    'health_interval_secs = 0',
    'health_deadline_secs = 30',
  ].join('\n') + '\n';
}

before(async () => {
  if (!fs.existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing: run npm install`);
  if (!fs.existsSync(CONVEYORD)) throw new Error(`${CONVEYORD} is missing: cargo build -p conveyor --bins`);
  dirs = makeHome('deploy');
  releases = path.join(dirs.home, 'releases');
  fs.mkdirSync(releases);
  repo = path.join(dirs.home, 'deployed repo');
  makeRepo(repo, { 'health.txt': 'ok\n', '.conveyor.toml': checklist(releases) });
  mock = await startMock();
  // The line's own steps: 1 the planner, 2 the executor (breaks the health check), 3 the
  // tester (the mock's default pass), 4 the investigation after the rollback (held).
  await mock.script('*', {
    1: [
      writePlan({ level: 'light', steps: [{ title: 'change', task: 'change health.txt', checks: [{ cmd: 'true', expect_exit: 0 }] }] }),
      text('planned'),
    ],
    2: [bash('echo broken > health.txt'), text('done')],
    4: [{ ...bash('echo ok > health.txt'), hold: true }, text('health restored another way')],
  });

  ({ app } = await launchEmbedded(dirs, mock, `hook_bin = ${JSON.stringify(CONVEYORD)}\n`));
});

after(async () => {
  await app?.stop();
  mock?.stop();
});

/** What the selected line's detail shows of its deploys. */
const deploysOf = (d) =>
  d.script(`
    const detail = document.querySelector('[data-testid=line-detail]');
    if (!detail) return null;
    const squash = (s) => (s ?? '').replace(/\\s+/g, ' ').trim();
    return {
      state: detail.dataset.state,
      steps: [...detail.querySelectorAll('[data-testid=step-row]')].map((r) => [r.dataset.kind, r.dataset.state]),
      deploys: [...detail.querySelectorAll('[data-testid=deploy]')].map((x) => ({
        label: x.getAttribute('aria-label'),
        outcome: x.dataset.outcome,
        commit: x.dataset.commit,
        commitText: squash(x.querySelector('[data-testid=deploy-commit]')?.textContent),
        previous: x.querySelector('[data-testid=deploy-previous]')?.title ?? null,
        previousText: squash(x.querySelector('[data-testid=deploy-previous]')?.textContent),
        marker: squash(x.querySelector('[role=status]')?.textContent) || null,
        outputOpen: x.querySelector('[data-testid=deploy-output]')?.open ?? null,
        output: x.querySelector('[data-testid=deploy-output] pre')?.textContent ?? null,
        tally: squash(x.querySelector('[data-testid=deploy-health-tally]')?.textContent) || null,
        tries: [...x.querySelectorAll('[data-testid=health-try]')].map((t) => ({
          ok: t.dataset.ok,
          result: squash(t.querySelector('[data-testid=health-result]')?.textContent),
          output: t.querySelector('[data-testid=health-output]')?.textContent ?? null,
        })),
      })),
    };
  `);

test('a red health check rolls the deploy back; the page shows it, then the green deploy after the investigation', async () => {
  const d = app.driver;
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');
  const base = git(repo, 'rev-parse', 'main').trim();
  const lineId = await queueLine(d, { project: PROJECT, repo, title: 'Деплой', task: 'Change health.txt.' });
  await openLine(d, lineId);

  // Rolled back, the investigation held: the page shows the red deploy as it stands. (The
  // line's own state is not asserted here: DESIGN.md keeps it `rolled_back` while the
  // investigation runs, the daemon shows `running` once the step starts.)
  const held = await d.until(
    async () => (await mock.log()).find((e) => e.line === lineId && e.step_kind === 'investigate' && e.held),
    'the investigation held by the mock',
    240000,
  );
  let last = null;
  const red = await d
    .until(async () => {
      const p = (last = await deploysOf(d));
      const investigating = p?.steps.some(([kind, state]) => kind === 'investigate' && state === 'running');
      return investigating && p.deploys.length === 1 && p.deploys[0].tries.length === 2 ? p : null;
    }, 'the rolled-back deploy on the page')
    .catch((e) => assert.fail(`${e.message}\n${JSON.stringify(last, null, 1)}`));
  const merged = git(repo, 'rev-parse', 'main').trim();
  assert.notEqual(merged, base);
  assert.deepEqual(red.steps.at(-1), ['investigate', 'running']);
  const [rb] = red.deploys;
  assert.equal(rb.outcome, 'rolled_back');
  assert.equal(rb.label, 'Деплой 1: откачен');
  assert.deepEqual([rb.commit, rb.commitText], [merged, `коммит ${merged.slice(0, 7)}`]);
  assert.deepEqual([rb.previous, rb.previousText], [base, `предыдущий ${base.slice(0, 7)}`]);
  assert.equal(rb.marker, `⟲ Откачен: на проде снова ${base.slice(0, 7)}`);
  assert.equal(rb.outputOpen, false);
  assert.ok(rb.output.includes(`deployed ${merged}`), rb.output);
  assert.ok(rb.output.includes(`rolled back to ${base}`), rb.output);
  assert.equal(rb.tally, 'Проверки здоровья: зелёных 0 из 2');
  assert.deepEqual(
    rb.tries.map((t) => [t.ok, t.result]),
    [
      ['false', '✗ красная'],
      ['false', '✗ красная'],
    ],
  );
  assert.ok(rb.tries.every((t) => t.output.includes('health.txt says broken')), JSON.stringify(rb.tries));
  assert.equal(fs.readFileSync(path.join(releases, 'current'), 'utf8').trim(), base);
  // Open the output and a try, as Anton would, for the screenshot.
  await d.script(
    "const x = document.querySelector('[data-testid=deploy]'); x.querySelector('[data-testid=deploy-output]').open = true; x.querySelector('[data-testid=health-try] details').open = true; x.scrollIntoView();",
  );
  await screenshot(d, 'deploy-rolled-back');
  await mock.release(held.session);

  // The investigation mends it: deployed again, green; the latest deploy first.
  const green = await d.until(async () => {
    const p = await deploysOf(d);
    return p?.state === 'awaiting_acceptance' && p.deploys.length === 2 ? p : null;
  }, 'the green deploy after the investigation', 240000);
  const head = git(repo, 'rev-parse', 'main').trim();
  const [now, before] = green.deploys;
  assert.deepEqual([now.outcome, now.label, now.commit, now.marker], ['green', 'Деплой 2: зелёный', head, null]);
  // The previous commit is what production runs: `base`, which the rollback put back (not the
  // rolled-back merge), shortened on the page.
  assert.equal(now.previous, base, `merged was ${merged}`);
  assert.equal(now.previousText, `предыдущий ${now.previous.slice(0, 7)}`);
  assert.equal(now.tally, 'Проверки здоровья: зелёных 1 из 1');
  assert.deepEqual(now.tries.map((t) => [t.ok, t.result]), [['true', '✓ зелёная']]);
  assert.equal(before.outcome, 'rolled_back');
  assert.equal(fs.readFileSync(path.join(releases, 'current'), 'utf8').trim(), head);
  await screenshot(d, 'deploy-green');
});
