#!/usr/bin/env node
// What share of a step's spend is really lost when the usage limit cuts it, measured with the
// real `claude` CLI (node_modules/.bin/claude) against the mock Anthropic API in counted usage
// mode (tests/fixtures/mock-anthropic.mjs: usage computed from each request, prompt caching
// from the CLI's own breakpoints). docs/benchmarks/budget.md, "A cut step: what is really lost".
//
//   node scripts/bench/resume-measured.mjs [--turns 40] [--edits 0.33] [--cuts 0.25,0.5,0.75]
//        [--read-bytes 6000] [--write-bytes 2000] [--say-bytes 0] [--before 10] [--ttl SECS]
//        [--warm]
//
// A scripted step of N turns in a real git worktree: Read and Bash calls that return
// `--read-bytes` each, and a share `--edits` of the turns Write a new file of `--write-bytes`;
// with `--say-bytes`, each turn's answer starts with that much text (a model's words, output
// tokens), as a real model's do.
// The measured step is not the session's first: an earlier step of `--before` reads (a planner
// reading the project) runs first in the same session, as in a line, so the measured step
// starts with that conversation in the (warm) cache; `--before 0` makes it the session's first.
// It runs uncut once, and once per cut point k (a share of N): turns 0..k, then the 5-hour
// limit's 429; the worktree is reset to its checkpoint (as the daemon does), the cache expires
// at the reset the 429 announced, and the same session is resumed with `--resume`: it writes
// the rolled-back files again, then does turns k..N. With `--warm` the cache outlives the cut
// (a step cut by its own budget cap and resumed within the cache's TTL). The cost of each run
// is the CLI's own (`model_usage_since_last_result`, the run's share of the session's total).
// Lost share =
// (cut + resumed − uncut) / cut; kept = 1 − lost. Same environment as the daemon's agents in
// the tests (an OAuth-style login, so the 429 is the subscription's limit).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const num = (name, dflt) => {
  const v = Number(opt(name, dflt));
  if (!Number.isFinite(v) || v < 0) {
    console.error(`--${name}: expected a non-negative number, got ${opt(name, dflt)}`);
    process.exit(2);
  }
  return v;
};
const N = num('turns', 40);
const EDITS = num('edits', 0.33);
const READ_BYTES = num('read-bytes', 6000);
const WRITE_BYTES = num('write-bytes', 2000);
const SAY_BYTES = num('say-bytes', 0);
// The cache's TTL: by default each breakpoint's own (2.1.332 asks for 1 hour).
const TTL = opt('ttl', null) === null ? null : num('ttl', 0);
const BEFORE = num('before', 10);
const WARM = args.includes('--warm');
const CUTS = opt('cuts', '0.25,0.5,0.75')
  .split(',')
  .map((c) => Math.min(N - 1, Math.max(1, Math.round(Number(c) * N))));
if (N < 2 || CUTS.some((k) => !Number.isFinite(k))) {
  console.error('--turns must be ≥ 2 and --cuts a comma-separated list of shares (0..1)');
  process.exit(2);
}

// Deterministic filler text of `bytes` bytes (varied, so it looks like source, not one byte).
function filler(seed, bytes) {
  let out = '';
  let i = 0;
  while (out.length < bytes) {
    const h = crypto.createHash('sha256').update(`${seed}:${i++}`).digest('hex');
    out += `    let v${i} = compute("${h.slice(0, 24)}", ${parseInt(h.slice(24, 30), 16)});\n`;
  }
  return out.slice(0, bytes);
}

// Turn i of the step: an edit (Write of a new file) for a share EDITS of the turns, spread
// evenly; otherwise a Read (even i) or a Bash `cat` (odd i) of a source file.
const isEdit = (i) => Math.floor((i + 1) * EDITS) > Math.floor(i * EDITS);
function turn(i) {
  if (isEdit(i)) {
    return { tool: 'Write', input: { file_path: `{{cwd}}/out/f${i}.rs`, content: filler(`w${i}`, WRITE_BYTES) } };
  }
  if (i % 2 === 0) return { tool: 'Read', input: { file_path: `{{cwd}}/src/m${i}.rs` } };
  return { tool: 'Bash', input: { command: `cat src/m${i}.rs`, description: 'read a module' } };
}
const said = (t, i) => (SAY_BYTES > 0 ? { ...t, say: filler(`s${i}`, SAY_BYTES) } : t);
const turns = Array.from({ length: N }, (_, i) => said(turn(i), i));

function startMock() {
  const child = spawn('node', [path.join(root, 'tests/fixtures/mock-anthropic.mjs'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => {
    readline.createInterface({ input: child.stdout }).once('line', (l) => {
      resolve({ child, url: `http://127.0.0.1:${l.split(' ')[1]}` });
    });
  });
}

async function post(url, body) {
  const r = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
}

const git = (cwd, ...a) => {
  const r = spawnSync('git', a, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

// A worktree of its own per scenario, committed (the checkpoint).
function worktree(tmp, name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'out'));
  fs.writeFileSync(path.join(dir, 'out/.keep'), '');
  for (let i = 0; i < N; i++) fs.writeFileSync(path.join(dir, `src/m${i}.rs`), filler(`r${i}`, READ_BYTES));
  for (let i = 0; i < BEFORE; i++) fs.writeFileSync(path.join(dir, `src/e${i}.rs`), filler(`e${i}`, READ_BYTES));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-qm', 'checkpoint');
  return dir;
}

// One CLI run: its own cost (this run's share of the session) and whether it hit the limit.
function runClaude(mock, home, cwd, session, prompt, resume) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: mock,
    CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    IS_SANDBOX: '1',
  };
  const r = spawnSync(
    path.join(root, 'node_modules/.bin/claude'),
    ['-p', prompt, resume ? '--resume' : '--session-id', session, '--output-format', 'stream-json', '--verbose',
      '--permission-mode', 'bypassPermissions'],
    { cwd, env, encoding: 'utf8', maxBuffer: 256 << 20 },
  );
  const results = r.stdout.split('\n').filter((l) => l.includes('"type":"result"')).map((l) => JSON.parse(l));
  const last = results.at(-1);
  if (!last) throw new Error(`claude printed no result (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  const own = Object.values(last.model_usage_since_last_result ?? {}).reduce((a, m) => a + m.costUSD, 0);
  return { cost: own, limited: last.api_error_status === 429, isError: last.is_error, result: last.result };
}

// The measured step's number: 2 after an earlier step, else 1.
const STEP = BEFORE > 0 ? 2 : 1;
const header = (attempt, text, step = STEP) =>
  `conveyor step ${step} attempt ${attempt} · executor · line bench "resume"\n${text}`;
// The earlier step: reads of modules the measured step does not read.
const earlier = Array.from({ length: BEFORE }, (_, i) => ({
  tool: 'Read',
  input: { file_path: `{{cwd}}/src/e${i}.rs` },
}));

// Runs the earlier step (when there is one) in a new session; true when the measured step's
// first run must resume the session.
function runEarlier(mock, home, cwd, session) {
  if (BEFORE === 0) return false;
  const r = runClaude(mock, home, cwd, session, header(1, 'plan the work', 1), false);
  if (r.isError) throw new Error(`the earlier step failed: ${r.result}`);
  return true;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'resume-measured-'));
  const { child, url } = await startMock();
  try {
    await post(`${url}/_mock/usage`, TTL === null ? { mode: 'counted' } : { mode: 'counted', cache_ttl_secs: TTL });
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);

    // Every scenario starts from an empty cache, as the uncut run does: the tools and system
    // prompt (the same for every session) would otherwise be read from the run before.
    const uncutDir = worktree(tmp, 'uncut');
    const uncutSession = crypto.randomUUID();
    await post(`${url}/_mock/script`, {
      session: uncutSession,
      steps: { '1.1': [...earlier, { text: 'planned' }], [`${STEP}.1`]: [...turns, { text: 'done' }] },
    });
    const warm = runEarlier(url, home, uncutDir, uncutSession);
    const uncut = runClaude(url, home, uncutDir, uncutSession, header(1, 'do the work'), warm);
    if (uncut.isError) throw new Error(`the uncut run failed: ${uncut.result}`);
    // The context the measured step starts from (tools, system prompt, the earlier step).
    const uncutLog = await (await fetch(`${url}/_mock/log`)).json();
    const start = uncutLog.find((e) => e.session === uncutSession && e.step === STEP).usage;
    const startTokens = start.cache_read_input_tokens + start.cache_creation_input_tokens + start.input_tokens;

    const rows = [];
    for (const k of CUTS) {
      const dir = worktree(tmp, `cut${k}`);
      const session = crypto.randomUUID();
      await post(`${url}/_mock/cache/clear`, {});
      const redo = turns.slice(0, k).filter((t) => t.tool === 'Write');
      await post(`${url}/_mock/script`, {
        session,
        steps: {
          '1.1': [...earlier, { text: 'planned' }],
          [`${STEP}.1`]: [...turns.slice(0, k), { limit: 'five_hour', reset_in_secs: 1, keep_cache: WARM }],
          [`${STEP}.2`]: [...redo, ...turns.slice(k), { text: 'done' }],
        },
      });
      const cut = runClaude(url, home, dir, session, header(1, 'do the work'), runEarlier(url, home, dir, session));
      if (!cut.limited) throw new Error(`cut at ${k}: the run was not cut by the limit: ${cut.result}`);
      // The daemon resets the worktree to the checkpoint, and resumes after the reset.
      git(dir, 'reset', '-q', '--hard');
      git(dir, 'clean', '-qfd');
      const log = await (await fetch(`${url}/_mock/log`)).json();
      const resetsAt = log.filter((e) => e.session === session && e.reply === 'limit').at(-1).resets_at * 1000;
      while (Date.now() <= resetsAt) await new Promise((r) => setTimeout(r, 100));
      const resumed = runClaude(
        url, home, dir, session,
        header(2, 'The worktree was rolled back to the last checkpoint: make your edits again, then go on.'),
        true,
      );
      if (resumed.isError) throw new Error(`cut at ${k}: the resumed run failed: ${resumed.result}`);
      const after = await (await fetch(`${url}/_mock/log`)).json();
      const first = after.find((e) => e.session === session && e.step === STEP && e.attempt === 2);
      // The resumed first request carries the earlier conversation: the cut attempt's prompt
      // and the output of its last read, the one the 429's request carried.
      const lastRead = Math.max(...turns.slice(0, k).map((t, i) => (t.tool === 'Write' ? -1 : i)));
      const carried =
        first.conversation.includes(`conveyor step ${STEP} attempt 1`) &&
        (lastRead < 0 || first.conversation.includes(/"(\w+)"/.exec(filler(`r${lastRead}`, READ_BYTES))[1]));
      if (!carried) throw new Error(`cut at ${k}: the resumed first request lacks the earlier conversation`);
      const lost = cut.cost + resumed.cost - uncut.cost;
      rows.push({ k, cut: cut.cost, resumed: resumed.cost, lost, kept: 1 - lost / cut.cost, carried, rewrites: redo.length });
    }

    console.log(`turns ${N}, edits ${EDITS} (${turns.filter((t) => t.tool === 'Write').length} writes), ` +
      `reads ${READ_BYTES} B, writes ${WRITE_BYTES} B, says ${SAY_BYTES} B, ${BEFORE} reads before, ${WARM ? 'resumed with the cache warm' : 'resumed after the reset'}, cache TTL ${TTL === null ? "the request's" : `${TTL} s`}; costs in USD (the CLI's own)`);
    console.log(`the step starts from ${startTokens} tokens of context; uncut: ${uncut.cost.toFixed(4)}`);
    console.log('  k  rewrites   cut  resumed   lost  kept  resumed-carried-conversation');
    for (const r of rows) {
      console.log(
        `${String(r.k).padStart(3)}  ${String(r.rewrites).padStart(8)}  ${r.cut.toFixed(4)}  ${r.resumed.toFixed(4)}  ` +
          `${r.lost.toFixed(4)}  ${(100 * r.kept).toFixed(1).padStart(4)}%  ${r.carried}`,
      );
    }
    const cutAll = rows.reduce((a, r) => a + r.cut, 0);
    const keptAll = rows.reduce((a, r) => a + (r.cut - r.lost), 0);
    console.log(`kept, weighted by the cut attempts' spend: ${(100 * keptAll / cutAll).toFixed(1)}%`);
  } finally {
    child.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
