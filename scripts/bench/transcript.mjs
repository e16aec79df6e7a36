// Measures a long run's conversation in the desktop app (debug build, under Xvfb through
// tauri-driver): how long a run of 5,000 events takes to open, and how smoothly it scrolls.
//
// The run is real: a line on the embedded daemon whose planner, the real `claude` against the
// scripted mock, is held on its last turn. Its stream-json log is then replaced by a generated
// one of 5,000 events (text, thinking, Bash/Read/Edit calls and their results, some outputs
// long enough to be cut, some errors) written in the CLI's own shapes, so the daemon reads,
// meters and serves it as it would a run of that length.
//
//   - open: from the click on the run until its rows are on screen and painted (the next
//     animation frame), the daemon's read and the IPC included; median of the opens;
//   - scroll: the conversation scrolled from top to bottom in 240 equal steps, one a frame;
//     each frame's interval (requestAnimationFrame), its median, 95th
//     percentile and worst, and the rows rendered at once (the window, not 5,000);
//   - the same scroll of 5,000 plain rows all in the DOM, in the same window, as the floor a
//     page with no window pays for its length: the ratio is against it.
//
// Usage: node scripts/bench/transcript.mjs [opens] [--write-docs]   (prints JSON on stdout;
// BENCH_EVENTS=N for another length)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeHome, ROOT } from '../../tests/e2e/harness.mjs';
import { embeddedConnected, launchEmbedded, makeRepo, openLine, queueLine, startMock, text, writePlan } from '../../tests/e2e/support.mjs';

const opens = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 7);
const writeDocs = process.argv.includes('--write-docs');
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);

/** `n` events of a run in the CLI's stream-json (one content block per assistant line, as the
 * CLI streams them), with the session's `system/init` first. */
function streamJson(n, session) {
  const lines = [JSON.stringify({ type: 'system', subtype: 'init', session_id: session, cwd: '/w', tools: ['Bash', 'Read', 'Edit'] })];
  const usage = { input_tokens: 1200, output_tokens: 90, cache_read_input_tokens: 20000, cache_creation_input_tokens: 300 };
  const assistant = (id, block) =>
    JSON.stringify({ type: 'assistant', message: { id, model: 'claude-opus-4-5', role: 'assistant', content: [block], usage }, session_id: session });
  const result = (id, content, isError) =>
    JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] }, session_id: session });
  let events = 0;
  for (let turn = 1; events < n; turn++) {
    const msg = `msg_${turn}`;
    const id = `toolu_${turn}`;
    if (turn % 7 === 1 && events < n) {
      lines.push(assistant(msg, { type: 'thinking', thinking: `Turn ${turn}: what is left is the ${turn % 3 ? 'parser' : 'writer'}.\n`.repeat(3) }));
      events++;
    }
    if (turn % 3 === 1 && events < n) {
      lines.push(assistant(msg, { type: 'text', text: `Step **${turn}**: checking \`src/mod_${turn % 40}.rs\`, then the tests.\n\n- one\n- two` }));
      events++;
    }
    if (events >= n) break;
    const kind = turn % 3;
    const call =
      kind === 0
        ? { name: 'Bash', input: { command: `cargo test -p crate_${turn % 9} -- --nocapture`, description: 'run the tests' } }
        : kind === 1
          ? { name: 'Read', input: { file_path: `/w/src/mod_${turn % 40}.rs` } }
          : { name: 'Edit', input: { file_path: `/w/src/mod_${turn % 40}.rs`, old_string: 'let a = 1;', new_string: 'let a = 2;' } };
    lines.push(assistant(msg, { type: 'tool_use', id, name: call.name, input: call.input }));
    events++;
    if (events >= n) break;
    const long = turn % 50 === 0;
    const output = long ? 'x'.repeat(40_000) : Array.from({ length: 1 + (turn % 12) }, (_, i) => `line ${i} of the output of call ${turn}`).join('\n');
    lines.push(result(id, output, turn % 23 === 0));
    events++;
  }
  return lines.join('\n') + '\n';
}

/** In the page: clicks `item`, and resolves to the ms until the run's rows are on screen and a
 * frame has been painted after them. */
const OPEN = `
  const [item, n, done] = arguments;
  const t0 = performance.now();
  document.querySelector(item).click();
  const shown = () => {
    const count = document.querySelector('[data-testid=run-count]');
    return count && Number(count.dataset.n) === n && document.querySelectorAll('[data-testid=run-row]').length > 0;
  };
  const wait = () => (shown() ? requestAnimationFrame(() => done(performance.now() - t0)) : requestAnimationFrame(wait));
  wait();
  setTimeout(() => done(-1), 20000);
`;

/** In the page: scrolls `css` from top to bottom in `FRAMES` equal steps, one per frame (a
 * quick drag of the scroll bar through the whole run: every part of it rendered in turn);
 * resolves to the frame intervals and the most rows in the DOM at once. */
const FRAMES = 240;
const SCROLL = `
  const [css, frames, done] = arguments;
  const el = document.querySelector(css);
  el.scrollTop = 0;
  const out = [];
  let most = 0;
  let last = performance.now();
  let n = 0;
  const step = () => {
    const now = performance.now();
    out.push(now - last);
    last = now;
    most = Math.max(most, el.querySelectorAll('[data-row]').length || el.querySelectorAll('[data-testid=run-row]').length);
    if (n++ >= frames) return done({ frames: out.slice(1), most, height: el.scrollHeight });
    el.scrollTop = ((el.scrollHeight - el.clientHeight) * n) / frames;
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
`;

/** In the page: the floor, 5,000 plain rows of the same texts all in the DOM, in a box of the
 * conversation's size. */
const PLAIN = `
  const [n] = arguments;
  const box = document.createElement('div');
  box.id = 'plain-rows';
  box.style.cssText = 'position:fixed;inset:80px 20px 20px 400px;overflow-y:auto;background:#fff;z-index:9';
  for (let i = 0; i < n; i++) {
    const row = document.createElement('div');
    row.dataset.row = '';
    row.style.cssText = 'padding:3px 2px;border-bottom:1px solid #e3e6ea;font-size:13px';
    row.textContent = 'Bash  cargo test -p crate_' + (i % 9) + ' -- --nocapture  готово';
    box.appendChild(row);
  }
  document.body.appendChild(box);
  return true;
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const frameStats = (f) => ({ median_ms: median(f), p95_ms: pct(f, 95), worst_ms: Math.max(...f), frames: f.length });

const dirs = makeHome('bench-transcript');
const repo = path.join(dirs.home, 'repo');
makeRepo(repo, { 'README.md': 'bench\n' });
const mock = await startMock();
await mock.script('*', {
  1: [writePlan({ steps: [{ title: 'x', task: 'x', size: 'xs' }] }), { ...text('planned'), hold: true }],
});
const { app, appData } = await launchEmbedded(dirs, mock);
const d = app.driver;
let result;
try {
  await embeddedConnected(d);
  await d.click('[data-testid=nav-lines]');
  const lineId = await queueLine(d, { project: 'bench', repo, title: 'Длинный разговор', task: 'x' });
  await openLine(d, lineId);
  const held = await d.until(async () => (await mock.log()).find((e) => e.line === lineId && e.held), 'the planner held', 120000);
  // The planner's log, replaced (a new file moved over it: the CLI keeps writing to the old one).
  const dir = path.join(appData, 'conveyor', 'lines', lineId);
  const log = await d.until(() => fs.readdirSync(dir).find((f) => /^step-1-1-\d+\.ndjson$/.test(f)), "the planner's log");
  const tmp = path.join(dir, 'bench.tmp');
  fs.writeFileSync(tmp, streamJson(EVENTS, held.session));
  fs.renameSync(tmp, path.join(dir, log));
  const item = '[data-testid=run-item][data-n="1"]';
  await d.waitFor(item);
  // Pinned, then closed: each open below is a click on a closed run.
  await d.click(item);
  await d.until(async () => (await d.findAll(`${item}[aria-pressed=true]`)).length === 1, 'the run pinned');
  // The daemon's read and the IPC alone: the whole run asked for as the view asks for it.
  const runId = Number(await d.script(`return document.querySelector('${item}').dataset.runId`));
  const ipc = [];
  for (let i = 0; i < 3; i++) {
    ipc.push(
      await d.scriptAsync(`const [id, done] = arguments; const t0 = performance.now();
         window.__TAURI_INTERNALS__.invoke('conveyor_transcript', { runId: id, after: 0 })
           .then((t) => done(t.events.length === ${EVENTS} ? performance.now() - t0 : -1), () => done(-1));`,
        [runId],
      ),
    );
  }
  if (ipc.some((t) => t < 0)) throw new Error(`the transcript did not come whole: ${ipc}`);
  const times = [];
  for (let i = 0; i < opens; i++) {
    await d.click(item);
    await d.until(async () => (await d.findAll('[data-testid=run-view]')).length === 0, 'the run closed');
    const t = await d.scriptAsync(OPEN, [item, EVENTS]);
    if (t < 0) {
      const v = await d.script("return document.querySelector('[data-testid=line-detail]')?.innerText.slice(0, 3000)");
      throw new Error(`the run did not open: ${v}`);
    }
    times.push(t);
  }
  const scroll = await d.scriptAsync(SCROLL, ['[data-testid=run-scroller]', FRAMES]);
  await d.script(PLAIN, [EVENTS]);
  const plain = await d.scriptAsync(SCROLL, ['#plain-rows', FRAMES]);
  result = {
    events: EVENTS,
    log_bytes: fs.statSync(path.join(dir, log)).size,
    open_ms: { median: median(times), all: times.map((t) => Math.round(t)) },
    ipc_ms: median(ipc),
    scroll: { ...frameStats(scroll.frames), rows_rendered: scroll.most, height_px: scroll.height },
    plain_rows: { ...frameStats(plain.frames), rows_rendered: plain.most, height_px: plain.height },
  };
} finally {
  await app.stop();
  mock.stop();
}
console.log(JSON.stringify(result, null, 2));

if (writeDocs) {
  const r = result;
  const f = (x) => x.toFixed(0);
  const f1 = (x) => x.toFixed(1);
  const yes = (ok) => (ok ? 'yes' : '**no**');
  const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [, 'unknown'])[1];
  const section = `<!-- transcript-bench:start -->
<!-- Generated by scripts/bench-app.sh (scripts/bench/transcript.mjs): do not edit by hand. -->

### Latest run: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}

- Command: \`scripts/bench-app.sh\` (${opens} opens; the scroll once, top to bottom in ${FRAMES} steps, one a frame)
- Machine: ${os.cpus().length} cores, ${cpu}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; Xvfb 1280×800×24; debug build
- The run: ${r.events} events, a ${(r.log_bytes / 2 ** 20).toFixed(1)} MB stream-json log served by the embedded daemon

| measure | the conversation | 5,000 plain rows in the DOM | ratio | target | met |
| --- | --- | --- | --- | --- | --- |
| click → rows on screen and painted (ms, median of ${opens}) | ${f(r.open_ms.median)} | — | — | < 1000 | ${yes(r.open_ms.median < 1000)} |
| scroll, frame interval median (ms) | ${f1(r.scroll.median_ms)} | ${f1(r.plain_rows.median_ms)} | ${(r.scroll.median_ms / r.plain_rows.median_ms).toFixed(2)}× | | |
| scroll, frame interval 95th percentile (ms) | ${f1(r.scroll.p95_ms)} | ${f1(r.plain_rows.p95_ms)} | ${(r.scroll.p95_ms / r.plain_rows.p95_ms).toFixed(2)}× | ≤ 1.25× the plain rows | ${yes(r.scroll.p95_ms <= 1.25 * r.plain_rows.p95_ms)} |
| scroll, worst frame (ms) | ${f(r.scroll.worst_ms)} | ${f(r.plain_rows.worst_ms)} | | | |
| rows in the DOM at once | ${r.scroll.rows_rendered} | ${r.plain_rows.rows_rendered} | | | |

The opens: ${r.open_ms.all.join(', ')} ms; of an open, the daemon's read of the log and the IPC
of its ${r.events} events alone take ${f(r.ipc_ms)} ms (median of 3). The frame intervals are
the machine's: Xvfb draws in software, so even the plain rows, which do no work at all while
scrolling, get a frame every ${f(r.plain_rows.median_ms)} ms here; the ratio to them is what the
conversation itself costs.
<!-- transcript-bench:end -->`;
  const doc = path.join(ROOT, 'docs', 'benchmarks', 'pult.md');
  let body = fs.readFileSync(doc, 'utf8');
  const re = /<!-- transcript-bench:start -->[\s\S]*<!-- transcript-bench:end -->/;
  body = re.test(body) ? body.replace(re, section) : `${body.trimEnd()}\n\n## A run of 5,000 events\n\n${section}\n`;
  fs.writeFileSync(doc, body);
}
