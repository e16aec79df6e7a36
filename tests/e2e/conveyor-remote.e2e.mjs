// The same pages against a daemon started on its own (`conveyord serve`) on a real port with a
// token: the remote path. A wrong token is refused and said as such, the right one connects
// and is kept in a file only the user can read (no keyring under Xvfb), a line queued in the
// app lands on the remote daemon and runs there until it waits for the answer to the question
// the judge validated; the daemon restarts with a night that has just ended, so the morning
// list is frozen with that question on it and the fork the judge decided in the expanded
// decided list; an answer by button resumes the line, which merges; and a daemon that goes
// away shows as unreachable.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, launch, makeHome, screenshot } from './harness.mjs';
import { CLAUDE, CONVEYORD, agentEnvToml, bash, judgeVerdict, makeRepo, openLine, ownerOnly, startMock, text, writePlan } from './support.mjs';

const TOKEN = 'remote-token-0123456789';
let app;
let mock;
let daemon;
let dirs;
let repo;
let url;
let server;
let config;

/** Starts `conveyord serve` with the test's config and `extra` keys; waits for its health. */
async function serve(extra) {
  fs.writeFileSync(
    path.join(server, 'conveyor.toml'),
    config + extra + agentEnvToml(mock, path.join(server, 'agent-home')),
  );
  daemon = spawn(CONVEYORD, ['serve', '--config', path.join(server, 'conveyor.toml')], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, RUST_LOG: 'warn' },
  });
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (daemon.exitCode !== null) throw new Error(`conveyord exited with ${daemon.exitCode}`);
    if (Date.now() > deadline) throw new Error('conveyord did not answer /api/health');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops the daemon (SIGTERM) and waits for it to exit. */
async function stopDaemon() {
  daemon.kill('SIGTERM');
  await new Promise((r) => (daemon.exitCode !== null ? r() : daemon.once('exit', r)));
}

/** `HH:MM:SS` of `ms` in UTC. */
const hms = (ms) => new Date(ms).toISOString().slice(11, 19);

async function api(p, init = {}) {
  const r = await fetch(`${url}${p}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers ?? {}) } });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

before(async () => {
  for (const f of [CLAUDE, CONVEYORD]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: build it first`);
  dirs = makeHome('remote');
  repo = path.join(dirs.home, 'remote repo');
  makeRepo(repo, { 'README.md': 'remote\n' });
  mock = await startMock();
  await mock.script('*', {
    1: [writePlan({ level: 'light', steps: [{ title: 'todo', task: 'write TODO', checks: [] }] }), text('planned')],
    2: [
      bash(
        'echo todo > TODO && ' +
          `echo '${JSON.stringify({ kind: 'question', text: 'Remote question?', options: ['a', 'b'], default: 'a', why: 'scripted' })}' >> "$CONVEYOR_JOURNAL" && ` +
          `echo '${JSON.stringify({ kind: 'fork', text: 'Name the file TODO or todo', options: ['TODO', 'todo'], default: 'TODO', why: 'scripted' })}' >> "$CONVEYOR_JOURNAL"`,
      ),
      text('done'),
    ],
    // The judge's run (a session of its own): the question goes to Anton, the fork's default
    // stands.
    3: [
      judgeVerdict([
        ['Remote question?', 'validated'],
        ['Name the file TODO or todo', 'decided', 'the name changes nothing'],
      ]),
      text('judged'),
    ],
    // Anton's answer, in the line's session.
    4: [bash('echo "answer: b" >> TODO'), text('answered')],
  });
  // The daemon, as on a server: its own config, data folder, token file and port.
  server = path.join(dirs.home, 'server');
  fs.mkdirSync(path.join(server, 'agent-home'), { recursive: true });
  fs.writeFileSync(path.join(server, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  config =
    `listen = "127.0.0.1:${port}"\ndata_dir = "data"\ntoken_file = "token"\nclaude_bin = ${JSON.stringify(CLAUDE)}\n` +
    `tick_ms = 100\nagent_env_inherit = false\n`;
  await serve('');
  app = await launch({
    env: { HOME: dirs.home, XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, PULT_NO_KEYRING: '1' },
  });
});

after(async () => {
  await app?.stop();
  if (daemon && daemon.exitCode === null) daemon.kill('SIGTERM');
  mock?.stop();
});

const badge = (d) => d.script("return document.querySelector('[data-testid=conveyor-status]')?.dataset.state ?? null;");

async function connect(d, token) {
  await d.click('[data-testid=conveyor-mode-remote]');
  await d.script("const u = document.querySelector('[data-testid=conveyor-url]'); u.value = ''; u.dispatchEvent(new Event('input', { bubbles: true }));");
  await d.type('[data-testid=conveyor-url]', url);
  await d.script("const t = document.querySelector('[data-testid=conveyor-token]'); t.value = ''; t.dispatchEvent(new Event('input', { bubbles: true }));");
  await d.type('[data-testid=conveyor-token]', token);
  await d.click('[data-testid=conveyor-connect]');
}

test('the pages over a remote daemon: a wrong token, the right one, a line run there, the daemon gone', async () => {
  const d = app.driver;
  await d.until(async () => (await badge(d)) === 'connected', 'the embedded daemon first', 60000);

  // A wrong token: refused, and said so.
  await d.click('[data-testid=nav-settings]');
  await d.waitFor('[data-testid=conveyor-mode-remote]');
  await connect(d, 'not-the-token');
  await d.until(async () => (await badge(d)) === 'unauthorized', 'unauthorized');
  const refused = await d.until(async () => (await d.text('[data-testid=conveyor-connection-message]')) || null, 'the refusal');
  assert.ok(refused.includes('401'), refused);
  await screenshot(d, 'conveyor-remote-wrong-token');

  // The right token connects; it is kept outside conveyor.json, readable by the user only.
  await connect(d, TOKEN);
  await d.until(async () => (await badge(d)) === 'connected', 'connected to the remote daemon');
  const appData = path.join(dirs.data, 'dev.pult.app');
  const saved = fs.readFileSync(path.join(appData, 'conveyor.json'), 'utf8');
  assert.ok(saved.includes(url) && !saved.includes(TOKEN), saved);
  assert.equal(fs.readFileSync(path.join(appData, 'conveyor-token'), 'utf8').trim(), TOKEN);
  assert.ok(ownerOnly(path.join(appData, 'conveyor-token')), 'the token file is 0600');
  await screenshot(d, 'conveyor-remote-settings');

  // A project and a line queued in the app land on the remote daemon and run there.
  await d.click('[data-testid=nav-lines]');
  await d.type('[data-testid=project-name]', 'remote');
  await d.type('[data-testid=project-repo]', repo);
  await d.click('[data-testid=project-add]');
  const projects = await d.until(async () => {
    const p = await api('/api/projects');
    return p.length === 1 ? p : null;
  }, 'the project on the daemon');
  await d.until(
    () => d.script("return [...document.querySelectorAll('[data-testid=line-project] option')].some((o) => o.value === arguments[0]);", [projects[0].id]),
    'the project in the line form',
  );
  await d.script(
    "const s = document.querySelector('[data-testid=line-project]'); s.value = arguments[0]; s.dispatchEvent(new Event('change', { bubbles: true }));",
    [projects[0].id],
  );
  await d.type('[data-testid=line-title]', 'TODO');
  await d.type('[data-testid=line-task]', 'Write TODO.');
  await d.click('[data-testid=line-add]');
  const lineId = await d.until(() => d.script("return document.querySelector('[data-testid=line-row]')?.dataset.lineId ?? null;"), 'the line');
  assert.equal((await api(`/api/lines/${lineId}`)).title, 'TODO');
  // A line that just started moves to another group on the page: a click on its row in
  // transit is lost, so the click is repeated until the detail shows.
  await openLine(d, lineId);
  await d.until(
    () => d.script("return document.querySelector('[data-testid=line-detail]')?.dataset.state === 'waiting_answer';"),
    'the remote line waiting for the answer',
    180000,
  );
  await d.waitFor('[data-testid=diff-file][data-path="TODO"]');
  await d.waitFor('[data-testid=budget-pool][data-kind=window]');
  await screenshot(d, 'conveyor-remote-lines');

  await d.click('[data-testid=nav-review]');
  await d.until(
    () => d.script("return [...document.querySelectorAll('[data-testid=question][data-status=validated]')].some((q) => q.textContent.includes('Remote question?'));"),
    'the remote question',
  );
  assert.equal(await d.script("return document.querySelector('[data-testid=review-freeze]').dataset.state;"), 'live');
  await screenshot(d, 'conveyor-remote-review');

  // Morning: the daemon restarts with a night that ended just after the question was
  // validated. The list is frozen with the question on it.
  const [asked] = (await api(`/api/lines/${lineId}`)).questions.filter((q) => q.kind === 'question');
  const end = Math.floor(Date.parse(asked.validated_at) / 1000) * 1000 + 1000;
  await stopDaemon();
  await d.until(async () => (await badge(d)) === 'unreachable', 'unreachable while the daemon restarts');
  // The night must be over when the daemon starts (seconds are the finest a night is given in).
  await d.until(async () => Date.now() > end + 100 || null, 'the end of the night', 5000);
  await serve(`night = "${hms(end - 2 * 3600 * 1000)}-${hms(end)}"\ntimezone = "UTC"\n`);
  await d.until(async () => (await badge(d)) === 'connected', 'connected again');
  await d.click('[data-testid=nav-lines]');
  await d.click('[data-testid=nav-review]');
  const frozen = await d.until(
    () => d.script("const f = document.querySelector('[data-testid=review-freeze]'); return f?.dataset.state === 'frozen' ? f.dataset.frozenAt : null;"),
    'the frozen list',
  );
  assert.equal(Date.parse(frozen), end);
  const q = await d.until(
    () => d.script("const q = document.querySelector('[data-testid=review-questions] [data-testid=question][data-status=validated]'); return q ? q.dataset.questionId : null;"),
    'the question on the frozen list',
  );
  assert.equal(q, asked.id);
  // The decided list, collapsed, then expanded by clicks: the fork, who decided it and why.
  assert.equal(await d.script("return document.querySelector('[data-testid=decided-list]').open;"), false);
  await d.click('[data-testid=decided-summary]');
  await d.click('[data-testid=decided-entry] summary');
  const decided = await d.until(
    () =>
      d.script(
        "const e = [...document.querySelectorAll('[data-testid=decided-entry]')].find((x) => x.textContent.includes('Name the file')); " +
          "const why = e?.querySelector('[data-testid=decided-why]'); " +
          'return e && e.open && why && why.getClientRects().length > 0 ? e.textContent : null;',
      ),
    'the decided fork open, with its why shown',
  );
  assert.ok(decided.includes('судья') && decided.includes('the name changes nothing'), decided);
  await screenshot(d, 'conveyor-remote-review-frozen');

  // An answer by button resumes the line in its session: it merges and awaits acceptance.
  await d.click(`[data-testid=question][data-question-id="${q}"] [data-testid=option-button][data-option="b"]`);
  await d.until(
    async () => (await api(`/api/lines/${lineId}`)).state === 'awaiting_acceptance' || null,
    'the line resumed by the answer to merge',
    180000,
  );
  const line = await api(`/api/lines/${lineId}`);
  // After the answer the tester checks the line (a session of its own, passing unscripted).
  assert.deepEqual(line.steps.map((s) => s.kind), ['planner', 'executor', 'judge', 'answer', 'tester']);
  const session = (await mock.log()).filter((e) => e.kind === 'messages' && e.session === line.session_id && e.step === 4);
  assert.ok(session.length > 0 && session[0].conversation.includes('A: b'), JSON.stringify(session[0] ?? null).slice(0, 400));
  await d.until(
    () => d.script("return document.querySelector(`[data-testid=question][data-question-id=\"${arguments[0]}\"]`)?.dataset.status === 'answered';", [q]),
    'the question shown answered',
  );
  await screenshot(d, 'conveyor-remote-review-answered');

  // The daemon goes away: the badge says unreachable, and the page still works.
  await stopDaemon();
  await d.until(async () => (await badge(d)) === 'unreachable', 'unreachable after the daemon stopped');
  await d.click('[data-testid=nav-lines]');
  await d.waitFor('[data-testid=line-row]');
  await screenshot(d, 'conveyor-remote-unreachable');
});
