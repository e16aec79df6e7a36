// Pieces shared by the conveyor e2e tests: a sample git repository, the scripted Anthropic
// mock (tests/fixtures/mock-anthropic.mjs, a real server on loopback) and the environment the
// real `claude` binary needs to talk to it and nothing else.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { launch, ROOT } from './harness.mjs';
import { WAIT_MS } from './webdriver.mjs';

export const CLAUDE = path.join(ROOT, 'node_modules', '.bin', 'claude');
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
export const CONVEYORD = path.join(TARGET, 'debug', 'conveyord');

export function git(dir, ...args) {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
}

/** A fresh repository on `main` with `files` (paths relative to it) committed. */
export function makeRepo(dir, files) {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'e2e');
  git(dir, 'config', 'user.email', 'e2e@localhost');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
}

/** Starts the mock Anthropic API; resolves to { url, script, log, stop }. */
export function startMock() {
  const child = spawn(process.execPath, [path.join(ROOT, 'tests', 'fixtures', 'mock-anthropic.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (c) => reject(new Error(`mock exited with ${c}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /LISTENING (\d+)/.exec(out);
      if (!m) return;
      child.stdout.removeAllListeners('data');
      child.removeAllListeners('exit');
      const url = `http://127.0.0.1:${m[1]}`;
      const admin = async (what, body) => {
        const r = await fetch(`${url}/_mock/${what}`, { method: 'POST', body: JSON.stringify(body) });
        if (r.status !== 204) throw new Error(`mock ${what}: ${r.status}`);
      };
      resolve({
        url,
        async script(session, steps) {
          await admin('script', { session, steps });
        },
        /** The script of every session that runs a step of `kind` (any line) and has no
         * script of its own or of its line: e.g. every judge run, each in a fresh session. */
        async scriptKind(kind, steps) {
          await admin('script', { kind, steps });
        },
        /** The script of every session that runs a step of `kind` for line `line` (`*`: any
         * kind), e.g. a line queued by the test whose session it cannot script in advance. */
        async scriptLine(line, steps, kind = '*') {
          await admin('script', { line, kind, steps });
        },
        /** Lets the held turns of `session` answer (and any it holds later). */
        async release(session) {
          await admin('release', { session });
        },
        async log() {
          return (await fetch(`${url}/_mock/log`)).json();
        },
        stop() {
          child.kill('SIGTERM');
        },
      });
    });
  });
}

/** The `agent_env` table (TOML) that points the CLI at the mock only (notes/claude-cli.md). */
export function agentEnvToml(mock, home) {
  const env = {
    HOME: home,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  return '[agent_env]\n' + Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join('\n') + '\n';
}

/** A Bash tool call, as the mock scripts it. */
export const bash = (command) => ({ tool: 'Bash', input: { command, description: 'scripted by the e2e test' } });
export const text = (t) => ({ text: t });
export const writePlan = (plan) => bash(`cat > "$CONVEYOR_PLAN" <<'PLAN'\n${JSON.stringify(plan, null, 2)}\nPLAN`);
/** A Write tool call of `rel` in the run's working folder (the line's worktree). */
export const write = (rel, content) => ({ tool: 'Write', input: { file_path: `{{cwd}}/${rel}`, content } });

/**
 * A checking role's (tester, reviewer, skeptic, extra) verdict as the mock plays it: a Write of
 * `{verdict, findings}` to the file its prompt names (`$CONVEYOR_VERDICT (<path>)`).
 */
export const roleVerdict = (verdict, findings = []) => ({
  tool: 'Write',
  input: {
    file_path: '{{prompt:\\$CONVEYOR_VERDICT \\(([^)]+)\\)}}',
    content: JSON.stringify({ verdict, findings }),
  },
});

/**
 * A judge run's verdict as the mock plays it: a Write of the file the judge's prompt names
 * (`$CONVEYOR_VERDICT`), with one entry per `[text, verdict, why]`. The daemon makes the entries'
 * ids, so each is read from the prompt by the start of its entry's text (as the Rust tests'
 * `judge_verdict` does); characters other than letters, digits and spaces match any character.
 */
export function judgeVerdict(calls, { onlyIfAsked = false } = {}) {
  const loose = (text) => text.replace(/[^\p{L}\p{N} ]/gu, '.');
  const entries = calls.map(([text, verdict, why = `scripted: ${verdict}`]) => {
    return { id: `{{prompt:id: ([0-9a-f-]+)[^a-z]+kind: [a-z]+[^a-z]+text: ${loose(text)}}}`, verdict, why };
  });
  // `onlyIfAsked`: the file is named only when the prompt carries the first entry's text, so
  // one judge script can hold a verdict per line: a judge run of another line gets an empty
  // path, its Write fails (a tool error the run goes on from) and the next verdict is tried.
  const gate = onlyIfAsked ? `(?=[\\s\\S]*text: ${loose(calls[0][0])})[\\s\\S]*?` : '';
  return {
    tool: 'Write',
    input: {
      file_path: `{{prompt:${gate}verdict with the Write tool to ([^ ]+) }}`,
      content: JSON.stringify({ entries }),
    },
  };
}

/** Whether `file` is readable by its owner only. */
export function ownerOnly(file) {
  return (fs.statSync(file).mode & 0o777) === 0o600;
}

/**
 * Adds a project on `repo` and queues a line on it through the Lines page's forms; resolves to
 * the new line's id.
 */
export async function queueLine(d, { project, repo, title, task }) {
  await d.type('[data-testid=project-name]', project);
  await d.type('[data-testid=project-repo]', repo);
  await d.click('[data-testid=project-add]');
  return queueLineOn(d, { project, title, task });
}

/** Queues a line on the existing project named `project` through the line form; resolves to
 * the new line's id (its row found by its title, unique in the project). */
export async function queueLineOn(d, { project, title, task }) {
  const projectId = await d.until(
    () =>
      d.script(
        "const o = [...document.querySelectorAll('[data-testid=line-project] option')].find((o) => o.textContent.includes(arguments[0])); return o ? o.value : null;",
        [project],
      ),
    'the project in the line form',
  );
  await d.script(
    "const s = document.querySelector('[data-testid=line-project]'); s.value = arguments[0]; s.dispatchEvent(new Event('change', { bubbles: true }));",
    [projectId],
  );
  await d.type('[data-testid=line-title]', title);
  await d.type('[data-testid=line-task]', task);
  await d.click('[data-testid=line-add]');
  const id = await d.until(
    () =>
      d.script(
        "const r = [...document.querySelectorAll('[data-testid=line-row]')].find((r) => r.querySelector('.title')?.textContent === arguments[0]); return r ? r.dataset.lineId : null;",
        [title],
      ),
    'the line in the list',
  );
  // The row can show (by the daemon's event) before the form has read its own answer and
  // emptied itself: a next line typed now would be lost in the reset.
  await d.until(
    () => d.script("return [...document.querySelectorAll('[data-testid=line-title]')].every((i) => i.value === '');"),
    'the line form emptied',
  );
  return id;
}

/** Waits until the app's badge says the (embedded) daemon is connected; it starts slowly. */
export function embeddedConnected(d) {
  return d.until(
    async () => (await d.script("return document.querySelector('[data-testid=conveyor-status]')?.dataset.state;")) === 'connected',
    'the embedded daemon connected',
    60000,
  );
}

/** Opens line `id` on the Lines page and waits for its detail. The click is retried: a line
 * that just started moves to another group, and a click on its row as it moves is lost. */
export function openLine(d, id) {
  return d.until(
    async () => {
      const shown = `[data-testid=line-detail][data-line-id="${id}"]`;
      if ((await d.findAll(shown)).length > 0) return true;
      await d.script(`document.querySelector('[data-testid=line-row][data-line-id="${id}"]')?.click();`);
      return false;
    },
    `the detail of line ${id}`,
    WAIT_MS,
    250,
  );
}

/**
 * Starts one of the mock servers that print `listening <port>` once listening
 * (tests/fixtures/mock-telegram.mjs, mock-planfix.mjs) with `args`; resolves to
 * { url, get(path) (its JSON), stop }.
 */
export function startListening(script, args) {
  const child = spawn(process.execPath, [path.join(ROOT, 'tests', 'fixtures', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (c) => reject(new Error(`${script} exited with ${c}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (\d+)\n/.exec(out);
      if (!m) return;
      child.stdout.removeAllListeners('data');
      child.removeAllListeners('exit');
      const url = `http://127.0.0.1:${m[1]}`;
      resolve({
        url,
        async get(p) {
          const r = await fetch(`${url}${p}`);
          if (!r.ok) throw new Error(`${script} GET ${p}: ${r.status}`);
          return r.json();
        },
        stop() {
          child.kill('SIGTERM');
        },
      });
    });
  });
}

/**
 * Starts the app with its daemon embedded and pointed at `mock`: the daemon's `conveyor.toml`
 * in the app's data folder (`extra`, top-level TOML lines, first; then the real `claude`, a
 * 100 ms tick, and the agent's own home with the mock's environment only), and the app on
 * `dirs` (makeHome) without the keyring. Resolves to { app, appData, agentHome }.
 */
export async function launchEmbedded(dirs, mock, extra = '') {
  const appData = path.join(dirs.data, 'dev.pult.app');
  fs.mkdirSync(appData, { recursive: true });
  const agentHome = path.join(dirs.home, 'agent-home');
  fs.mkdirSync(agentHome, { recursive: true });
  fs.writeFileSync(
    path.join(appData, 'conveyor.toml'),
    extra +
      `claude_bin = ${JSON.stringify(CLAUDE)}\ntick_ms = 100\nagent_env_inherit = false\nstep_timeout_secs = 300\n` +
      agentEnvToml(mock, agentHome),
  );
  const app = await launch({
    env: { HOME: dirs.home, XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, PULT_NO_KEYRING: '1' },
  });
  return { app, appData, agentHome };
}
