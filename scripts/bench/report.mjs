#!/usr/bin/env node
// Helper of scripts/bench-deepwork.sh (no dependencies):
//
//   node report.mjs check  <results-dir>   compare deepwork's outputs with rg's and fd's; writes
//                                          checks.json, prints one line per check; exit 1 if any
//                                          check failed
//   node report.mjs report <results-dir>   read hyperfine's JSON, the loop's output, checks.json
//                                          and meta.json; print the table; rewrite the generated
//                                          section of docs/benchmarks/deepwork.md (BENCH_DOC)
//                                          unless BENCH_NO_DOC=1
//
// File names in <results-dir> are the contract with the shell script:
//   find-rare.deepwork.out / find-rare.rg.out, find-common.*, list-rs.deepwork.out / list-rs.fd.out,
//   walk.deepwork.out / walk.fd.out, tree.deepwork.out, loop-<k>.out, live-<k>.out,
//   hyperfine-<case>.json, index.out, index-real.out, run-<tree>/{run.json, run-late.json, rg.count, fd.count,
//   rg-no-require-git.count, case.txt}, meta.json.

import fs from 'node:fs';
import path from 'node:path';

const START = '<!-- deepwork-bench:start -->';
const END = '<!-- deepwork-bench:end -->';

const [cmd, dir] = process.argv.slice(2);
if (!['check', 'report'].includes(cmd) || !dir) {
  console.error('usage: node report.mjs check|report <results-dir>');
  process.exit(2);
}
const file = (name) => path.join(dir, name);
const readJson = (name) => JSON.parse(fs.readFileSync(file(name), 'utf8'));
// latin1 keeps every byte as one char: outputs with non-UTF-8 bytes compare exactly
const lines = (name) => {
  const s = fs.readFileSync(file(name), 'latin1');
  const out = s.split('\n');
  if (out.length && out[out.length - 1] === '') out.pop();
  return out;
};

// ---------------------------------------------------------------- checks
const meta = () => readJson('meta.json');

function normPath(p, root) {
  if (root && p.startsWith(root + '/')) p = p.slice(root.length + 1);
  while (p.startsWith('./')) p = p.slice(2);
  return p;
}

// `path:line: text` (deepwork) or `path:line:text` (rg) -> {key: 'path:line', text}
function parseHit(line, root, deepwork) {
  const m = /^(.*?):(\d+):(.*)$/s.exec(line);
  if (!m) return null;
  let text = m[3];
  if (deepwork && text.startsWith(' ')) text = text.slice(1);
  return { key: `${normPath(m[1], root)}:${m[2]}`, text };
}

function diffSets(a, b) {
  const sa = new Set(a), sb = new Set(b);
  const onlyA = [...sa].filter((x) => !sb.has(x)).sort();
  const onlyB = [...sb].filter((x) => !sa.has(x)).sort();
  return { onlyA, onlyB };
}

function orderOf(list) {
  const byte = list.every((x, i) => i === 0 || list[i - 1] <= x);
  if (byte) return 'sorted (bytewise)';
  const comp = (x, y) => {
    const a = x.split('/'), b = y.split('/');
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return a.length - b.length;
  };
  if (list.every((x, i) => i === 0 || comp(list[i - 1], x) <= 0)) return 'sorted (by path component)';
  return 'NOT sorted';
}

const show = (xs, n = 5) => xs.slice(0, n).map((x) => (x.length > 160 ? x.slice(0, 160) + '…' : x));

function checkFind(name, text, root) {
  const d = lines(`${name}.deepwork.out`);
  const r = lines(`${name}.rg.out`);
  const dh = d.map((l) => parseHit(l, root, true));
  const rh = r.map((l) => parseHit(l, root, false));
  const badLines = d.filter((l, i) => !dh[i]);
  const dk = dh.filter(Boolean).map((h) => h.key);
  const rk = rh.filter(Boolean).map((h) => h.key);
  const { onlyA, onlyB } = diffSets(dk, rk);
  const dupes = dk.length - new Set(dk).size;
  // text of the same hit: reported, not failed (deepwork may trim a CR or shorten long lines)
  const rText = new Map(rh.filter(Boolean).map((h) => [h.key, h.text]));
  const textDiff = dh.filter((h) => h && rText.has(h.key) && rText.get(h.key) !== h.text);
  const ok = d.length === r.length && onlyA.length === 0 && onlyB.length === 0 && badLines.length === 0 && dupes === 0;
  const notes = [];
  if (badLines.length) notes.push(`${badLines.length} output lines not of the form path:line: text, e.g. ${JSON.stringify(show(badLines, 2))}`);
  if (onlyA.length) notes.push(`${onlyA.length} hits only deepwork has, e.g. ${show(onlyA).join(', ')}`);
  if (onlyB.length) notes.push(`${onlyB.length} hits only rg has, e.g. ${show(onlyB).join(', ')}`);
  if (dupes) notes.push(`${dupes} duplicate hits`);
  if (textDiff.length) {
    const h = textDiff[0];
    notes.push(`(info) ${textDiff.length} hits whose text differs from rg's, e.g. ${h.key}: deepwork ${JSON.stringify(h.text.slice(0, 80))} vs rg ${JSON.stringify(rText.get(h.key).slice(0, 80))}`);
  }
  return { name, what: `FIND ${JSON.stringify(text)}: hits = rg -F -n`, ok, deepwork: d.length, competitor: r.length, notes };
}

function checkPaths(name, what, root, wantSorted) {
  const d = lines(`${name}.deepwork.out`).map((p) => normPath(p, root));
  const f = lines(`${name}.fd.out`).map((p) => normPath(p, root));
  const { onlyA, onlyB } = diffSets(d, f);
  const dupes = d.length - new Set(d).size;
  const ok = d.length === f.length && onlyA.length === 0 && onlyB.length === 0 && dupes === 0;
  const notes = [];
  if (onlyA.length) notes.push(`${onlyA.length} paths only deepwork has, e.g. ${show(onlyA).join(', ')}`);
  if (onlyB.length) notes.push(`${onlyB.length} paths only fd has, e.g. ${show(onlyB).join(', ')}`);
  if (dupes) notes.push(`${dupes} duplicate paths`);
  if (wantSorted) notes.push(`(info) deepwork's order: ${orderOf(d)}`);
  return { name, what, ok, deepwork: d.length, competitor: f.length, notes };
}

// A whole run (deepwork with the fake bridge): two bridge calls, FIND's and LIST's totals equal
// to rg's and fd's counts.
function checkRun(id) {
  const d = path.join(dir, id);
  if (!fs.existsSync(path.join(d, 'run.json'))) return null;
  const [tree, text, glob] = fs.readFileSync(path.join(d, 'case.txt'), 'utf8').split('\n');
  const count = (f) => (fs.existsSync(path.join(d, f)) ? Number(fs.readFileSync(path.join(d, f), 'utf8').trim()) : NaN);
  const notes = [];
  let run;
  try {
    run = JSON.parse(fs.readFileSync(path.join(d, 'run.json'), 'utf8'));
  } catch (e) {
    return { name: id, what: `whole run on ${tree}`, ok: false, deepwork: '?', competitor: '?', notes: [`run.json: ${e.message}`] };
  }
  const reqs = run.steps?.[0]?.requests ?? [];
  const find = reqs.find((r) => r.kind.toLowerCase() === 'find')?.hits;
  const list = reqs.find((r) => r.kind.toLowerCase() === 'list')?.hits;
  const rg = count('rg.count'), fd = count('fd.count'), rgAll = count('rg-no-require-git.count');
  const shape = run.stop_reason === 'no_requests' && run.steps.length === 2;
  if (!shape) notes.push(`stop_reason ${run.stop_reason} after ${run.steps?.length} steps (want no_requests after 2)`);
  // Outside a git repository rg and fd do not read .gitignore files, deepwork does: then the
  // fair count is rg's with --no-require-git (fd 8 has no such flag).
  const findOk = find === rg || find === rgAll;
  if (!findOk) notes.push(`FIND counts ${find} hits, rg ${rg} (with --no-require-git ${rgAll})`);
  else if (rg !== rgAll) notes.push(`(info) not a git repository: rg finds ${rg} hits, ${rgAll} with --no-require-git (deepwork's rules: .gitignore honoured everywhere)`);
  if (list !== fd) notes.push(`(info) LIST counts ${list} paths, fd -g ${fd}${rg !== rgAll ? ' (fd reads no .gitignore outside a git repository)' : ''}`);
  const listOk = list === fd || rg !== rgAll;
  // the run with "prespawn": false must have taken the same steps
  let lateOk = true;
  if (fs.existsSync(path.join(d, 'run-late.json'))) {
    try {
      const late = JSON.parse(fs.readFileSync(path.join(d, 'run-late.json'), 'utf8'));
      lateOk = JSON.stringify(late.steps) === JSON.stringify(run.steps) && late.answer === run.answer;
    } catch {
      lateOk = false;
    }
    if (!lateOk) notes.push('the run with "prespawn": false took other steps or answered otherwise (run-late.json)');
  }
  return {
    name: id,
    what: `whole run on \`${tree}\`: FIND ${JSON.stringify(text)} = rg -F -n, LIST **/${glob} = fd -g ${glob}, 2 bridge calls, the same with "prespawn": false`,
    ok: shape && findOk && listOk && lateOk,
    deepwork: `${find} hits, ${list} paths`,
    competitor: `${rg} hits, ${fd} paths`,
    notes,
  };
}

function doCheck() {
  const m = meta();
  const root = m.dir;
  const checks = [
    checkFind('find-rare', m.rare, root),
    checkFind('find-common', m.common, root),
    checkPaths('list-rs', "LIST '**/*.rs' = fd --type f -g '*.rs'", root, true),
    checkPaths('walk', 'walk = fd --type f', root, false),
    checkRun('run-generated'),
    checkRun('run-real'),
  ].filter(Boolean);
  // the harness itself: do the competitors see the tree the generator says it made?
  const harness = [];
  const rgRare = lines('find-rare.rg.out').length;
  if (rgRare !== m.rare_lines) harness.push(`rg finds ${rgRare} lines of the rare text, the generator planted ${m.rare_lines}`);
  const fdAll = lines('walk.fd.out').length;
  if (fdAll !== m.stats.visible) harness.push(`fd lists ${fdAll} files, the generator made ${m.stats.visible} visible ones`);
  const fdRs = lines('list-rs.fd.out').length;
  if (fdRs !== m.stats.visible_rs) harness.push(`fd lists ${fdRs} .rs files, the generator made ${m.stats.visible_rs} visible ones`);
  const tree = fs.readFileSync(file('tree.deepwork.out'), 'utf8');
  const out = { checks, harness, tree: { lines: tree.split('\n').length - 1, chars: tree.length } };
  fs.writeFileSync(file('checks.json'), JSON.stringify(out, null, 2) + '\n');
  for (const c of checks) {
    console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.what}: deepwork ${c.deepwork}, competitor ${c.competitor}`);
    for (const n of c.notes) console.log(`       ${n}`);
  }
  for (const h of harness) console.log(`WARN harness: ${h}`);
  console.log(`info tree: ${out.tree.lines} lines, ${out.tree.chars} chars`);
  process.exit(checks.every((c) => c.ok) ? 0 : 1);
}

// ---------------------------------------------------------------- report
const CASES = [
  { id: 'find-rare', label: 'FIND rare literal', vs: 'rg -F -n', target: 1.2 },
  { id: 'find-common', label: 'FIND common literal', vs: 'rg -F -n', target: 1.2 },
  { id: 'list-rs', label: "LIST `**/*.rs`", vs: "fd --type f -g '*.rs'", target: 1.0 },
  { id: 'walk', label: 'walk (every file)', vs: 'fd --type f', target: 1.0, derived: true },
  { id: 'tree', label: 'folder tree (capped)', vs: 'fd --type f', target: 1.0, derived: true },
];

const ms = (s) => (s * 1000).toFixed(1);
const fmtBytes = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} kB`);

function loopFigures(prefix) {
  const runs = fs.readdirSync(dir).filter((f) => new RegExp(`^${prefix}-\\d+\\.out$`).test(f)).sort();
  const perKind = new Map();
  const means = [], maxes = [];
  let bad = [];
  for (const r of runs) {
    for (const l of lines(r)) {
      let m;
      if ((m = /^step\s+(\d+)\s+(\S+)\s+(\d+(?:\.\d+)?)\s*$/.exec(l))) {
        const k = m[2];
        if (!perKind.has(k)) perKind.set(k, []);
        perKind.get(k).push(Number(m[3]));
      } else if ((m = /^mean_us\s+(\d+(?:\.\d+)?)\s+max_us\s+(\d+(?:\.\d+)?)\s*$/.exec(l))) {
        means.push(Number(m[1]));
        maxes.push(Number(m[2]));
      } else if (l.trim()) bad.push(l);
    }
  }
  const kinds = [...perKind.entries()].map(([k, v]) => ({
    kind: k,
    n: v.length,
    mean_ms: v.reduce((a, b) => a + b, 0) / v.length / 1000,
    max_ms: Math.max(...v) / 1000,
  }));
  // The target's own measure: the mean over the steps that list (the tree of the first message
  // and LIST), all but the transport.
  const listing = ['first', 'LIST'].flatMap((k) => perKind.get(k) ?? []);
  return {
    runs: runs.length,
    listing_mean_ms: listing.length ? listing.reduce((a, b) => a + b, 0) / listing.length / 1000 : NaN,
    find_mean_ms: perKind.has('FIND') ? perKind.get('FIND').reduce((a, b) => a + b, 0) / perKind.get('FIND').length / 1000 : NaN,
    mean_ms: means.length ? means.reduce((a, b) => a + b, 0) / means.length / 1000 : NaN,
    max_ms: maxes.length ? Math.max(...maxes) / 1000 : NaN,
    kinds,
    unparsed: bad.slice(0, 3),
  };
}

// CPU used on the machine during a case beyond what the timed commands used, in cores (1.0 =
// one core busy all along). The sampler, hyperfine and the kernel's own work make ~0.05 of it.
function otherLoad(id, m, results) {
  try {
    const read = (f) => {
      const [stat, t] = fs.readFileSync(file(f), 'utf8').trim().split('\n');
      const x = stat.trim().split(/\s+/).slice(1).map(Number);
      const total = x.reduce((a, b) => a + b, 0);
      return { busy: (total - x[3] - x[4]) / m.clk_tck, t: Number(t) };
    };
    const a = read(`cpu-${id}.start`), b = read(`cpu-${id}.end`);
    const wall = b.t - a.t;
    const ours = results.reduce((sum, r) => sum + (m.runs + m.warmup) * (r.user + r.system), 0);
    return wall > 0 ? Math.max(0, (b.busy - a.busy - ours) / wall) : NaN;
  } catch {
    return NaN;
  }
}

function doReport() {
  const m = meta();
  const checks = fs.existsSync(file('checks.json')) ? readJson('checks.json') : { checks: [], harness: [] };
  const rows = [];
  for (const c of CASES) {
    const f = `hyperfine-${c.id}.json`;
    if (!fs.existsSync(file(f))) continue;
    const [d, o] = readJson(f).results;
    const ratio = d.mean / o.mean;
    const noisy = d.stddev > 0.1 * d.mean || o.stddev > 0.1 * o.mean;
    const other = otherLoad(c.id, m, [d, o]);
    rows.push({ ...c, d, o, ratio, minRatio: d.min / o.min, met: ratio <= c.target, noisy, other, busy: other > 0.2 });
  }
  const loop = loopFigures('loop');
  const live = loopFigures('live');
  const loopTarget = m.loop_target_ms;
  const rgRare = rows.find((r) => r.id === 'find-rare');
  // whole runs: deepwork's time against rg's plus fd's
  const runs = [];
  for (const [id, label, target] of [['run-generated', 'generated tree', null], ['run-real', 'real tree', 1.2]]) {
    const f = `hyperfine-${id}.json`;
    if (!fs.existsSync(file(f))) continue;
    // late: the same run with "prespawn": false (each bridge started when its message is ready)
    const [d, rg, fd, bridge, late] = readJson(f).results;
    const [tree, text, glob] = fs.readFileSync(path.join(dir, id, 'case.txt'), 'utf8').split('\n');
    const both = rg.mean + fd.mean;
    const noisy = [d, rg, fd].some((x) => x.stddev > 0.1 * x.mean);
    const other = otherLoad(id, m, [d, rg, fd, bridge, late].filter(Boolean));
    // deepwork's own part: the run whose bridge calls do not overlap it, less those calls
    const own = bridge && late ? late.mean - 2 * bridge.mean : NaN;
    runs.push({ id, label, tree, text, glob, d, rg, fd, bridge, late, own, both, ratio: d.mean / both, minRatio: d.min / (rg.min + fd.min), target, noisy, other, busy: other > 0.2 });
  }
  const indexOf = (name) => {
    if (!fs.existsSync(file(name))) return null;
    const t = fs.readFileSync(file(name), 'utf8').trim().split(/\s+/);
    const o = {};
    for (let i = 0; i + 1 < t.length; i += 2) o[t[i]] = t[i + 1];
    return o;
  };
  const indexes = [['generated tree', indexOf('index.out'), m.dir_display], ['real tree', indexOf('index-real.out'), m.real_dir]].filter(([, x]) => x);

  // ---- console table
  const pad = (s, n) => String(s).padEnd(n);
  console.log('');
  console.log(pad('case', 22) + pad('deepwork ms', 18) + pad('competitor ms', 18) + pad('ratio', 7) + pad('(min)', 7) + pad('target', 9) + 'met');
  for (const r of rows) {
    console.log(
      pad(r.label.replace(/`/g, ''), 22) + pad(`${ms(r.d.mean)} ± ${ms(r.d.stddev)}`, 18) + pad(`${ms(r.o.mean)} ± ${ms(r.o.stddev)}`, 18) +
        pad(r.ratio.toFixed(2), 7) + pad(r.minRatio.toFixed(2), 7) + pad(`≤ ${r.target.toFixed(1)}×`, 9) + pad(r.met ? 'yes' : 'NO', 4) +
        (r.noisy ? ' noisy: sd > 10%' : '') + (r.busy ? ` other load: ${r.other.toFixed(2)} cores` : ''),
    );
  }
  console.log(`loop (${m.loop_steps} steps × ${loop.runs} runs): mean ${loop.mean_ms.toFixed(1)} ms/step, max ${loop.max_ms.toFixed(1)} ms`);
  for (const k of loop.kinds) console.log(`  ${pad(k.kind, 10)} n=${pad(k.n, 4)} mean ${k.mean_ms.toFixed(1)} ms  max ${k.max_ms.toFixed(1)} ms`);
  for (const l of loop.unparsed) console.log(`  (unparsed loop line: ${l})`);
  const listingLine = (name, l) => `${name}: tree and LIST steps mean ${l.listing_mean_ms.toFixed(1)} ms (target ≤ ${loopTarget} ms: ${l.listing_mean_ms <= loopTarget ? 'yes' : 'NO'}); FIND steps mean ${l.find_mean_ms.toFixed(1)} ms${rgRare ? ` vs rg ${ms(rgRare.o.mean)} ms (${l.find_mean_ms <= rgRare.o.mean * 1000 ? 'yes' : 'NO'})` : ''}`;
  console.log(listingLine('loop, own index', loop));
  if (live.runs) console.log(listingLine('loop, live index', live));
  for (const r of runs) {
    console.log(`whole run, ${r.label}: deepwork ${ms(r.d.mean)} ms vs rg ${ms(r.rg.mean)} + fd ${ms(r.fd.mean)} = ${ms(r.both)} ms: ${r.ratio.toFixed(2)}× (minima ${r.minRatio.toFixed(2)}×)${r.target ? ` target ≤ ${r.target}×: ${r.ratio <= r.target ? 'yes' : 'NO'}` : ''}; bridges started late ${r.late ? `${ms(r.late.mean)} ms: ${(r.late.mean / r.both).toFixed(2)}× (minima ${(r.late.min / (r.rg.min + r.fd.min)).toFixed(2)}×)` : '?'}; one bridge call ${r.bridge ? ms(r.bridge.mean) : '?'} ms; deepwork's own part ${(r.own / r.both).toFixed(2)}×${r.noisy ? ' noisy' : ''}${r.busy ? ` other load ${r.other.toFixed(2)} cores` : ''}`);
  }
  for (const [name, x] of indexes) console.log(`index, ${name}: ${x.files} files, ${(x.heap_bytes / 1e6).toFixed(1)} MB heap, RSS +${(x.rss_delta_kb / 1024).toFixed(1)} MiB, build ${(x.build_us / 1000).toFixed(0)} ms, check ${(x.check_us / 1000).toFixed(1)} ms over ${x.dirs_checked} folders`);

  if (process.env.BENCH_NO_DOC === '1') return;

  // ---- markdown
  const s = m.stats;
  const md = [];
  md.push(START);
  md.push('<!-- Generated by scripts/bench-deepwork.sh: do not edit by hand, run the script again. -->');
  md.push('');
  md.push(`### Latest run: ${m.date}`);
  md.push('');
  md.push(`- Command: \`${m.command}\``);
  md.push(`- Machine: ${m.nproc} cores, ${m.cpu}, ${m.mem}; ${m.os}`);
  md.push(`- Tools: ${m.rg_version}; ${m.fd_version}; ${m.hyperfine_version}; ${m.rustc_version}`);
  md.push(`- deepwork: ${m.revision}${m.revision.startsWith('BENCH_TOOL') ? '' : ', built with \`cargo build --release -p deepwork --example tool --bin deepwork\`'}`);
  md.push(`- Tree: \`${m.dir_display}\` (\`gen-tree.mjs --files ${m.params.files} --seed ${m.params.seed}\`): ${s.files} files, ${fmtBytes(s.bytes)}; ${s.visible} visible to the walk (${s.visible_rs} \`.rs\`), ${s.ignored} ignored by .gitignore (node_modules/, /target/, *.log, a nested .gitignore), ${s.hidden} hidden, ${s.binary} binary, ${s.big} large (1–10 MB), folder depth up to ${s.max_depth}`);
  md.push(`- Texts: rare \`${m.rare}\` (${m.rare_lines} lines), common \`${m.common}\` (${checks.checks.find((c) => c.name === 'find-common')?.competitor ?? '?'} lines)`);
  md.push(`- hyperfine: \`--warmup ${m.warmup} --runs ${m.runs} --shell=none --output=null\`, warm page cache${m.busy_note ? `; ${m.busy_note}` : ''}`);
  md.push('');
  md.push('| case | deepwork (ms, mean ± sd) | competitor | competitor (ms, mean ± sd) | ratio | ratio of minima | target | met |');
  md.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    md.push(`| ${r.label} | ${ms(r.d.mean)} ± ${ms(r.d.stddev)} | \`${r.vs}\` | ${ms(r.o.mean)} ± ${ms(r.o.stddev)} | ${r.ratio.toFixed(2)}×${r.noisy || r.busy ? ' ²' : ''} | ${r.minRatio.toFixed(2)}× | ≤ ${r.target.toFixed(1)}×${r.derived ? ' ¹' : ''} | ${r.met ? 'yes' : '**no**'} |`);
  }
  md.push('');
  md.push('¹ Not a target of its own in the issue: the walk is LIST without the glob, and the tree must walk everything too, so LIST\'s bound applies.');
  const shaky = rows.filter((r) => r.noisy || r.busy);
  if (shaky.length) {
    const why = shaky.map((r) => `${r.label}: ${[r.noisy ? 'sd over 10% of the mean' : '', r.busy ? `other programs used ${r.other.toFixed(2)} cores beside it` : ''].filter(Boolean).join(', ')}`);
    md.push('', `² Less certain than its digits say (${why.join('; ')}). The ratio of minima is the steadier figure on a shared machine.`);
  }
  md.push('');
  const listingMd = (l) => `tree and LIST steps mean **${l.listing_mean_ms.toFixed(1)} ms** (target ≤ ${loopTarget} ms: ${l.listing_mean_ms <= loopTarget ? 'yes' : '**no**'}); FIND steps mean **${l.find_mean_ms.toFixed(1)} ms**${rgRare ? ` against ripgrep's ${ms(rgRare.o.mean)} ms for the same search (no slower: ${l.find_mean_ms <= rgRare.o.mean * 1000 ? 'yes' : '**no**'})` : ''}`;
  const loopTable = (l) => {
    md.push('| step kind | steps | mean (ms) | max (ms) |');
    md.push('| --- | --- | --- | --- |');
    for (const k of l.kinds) md.push(`| ${k.kind} | ${k.n} | ${k.mean_ms.toFixed(1)} | ${k.max_ms.toFixed(1)} |`);
  };
  md.push(`Loop overhead, all but the transport (\`tool loop --steps ${m.loop_steps} --find ${m.rare}\`, scripted in-process transport, ${loop.runs} runs after one warm-up run; the run builds its own index in its first step, as the CLI does): ${listingMd(loop)}. Over every step: mean ${loop.mean_ms.toFixed(1)} ms, max ${loop.max_ms.toFixed(1)} ms.`);
  md.push('');
  loopTable(loop);
  if (live.runs) {
    md.push('');
    md.push(`The same with a live index handed to the run (\`--live\`: pult's case, the folder indexed when it was opened; every step still checks it for changes): ${listingMd(live)}. Over every step: mean ${live.mean_ms.toFixed(1)} ms, max ${live.max_ms.toFixed(1)} ms.`);
    md.push('');
    loopTable(live);
  }
  md.push('');
  if (runs.length) {
    md.push('Whole runs: the `deepwork` binary (release) with the fake bridge (`tests/fixtures/fake-bridge.mjs`; its first answer asks for a FIND and a LIST, its second for nothing): the index, the first message, bridge call 1, FIND, LIST, bridge call 2, both Node start-ups included, each bridge started as soon as its step is certain (the default on Linux). Against it, `rg -F -n TEXT` and `fd --type f -g GLOB` timed alone in the same folder and added up. In the same hyperfine run: the same deepwork run with `"prespawn": false` (each bridge started only when its message is ready: "bridges started late"), and one bridge call alone; deepwork\'s own part is the late run less two bridge calls.');
    md.push('');
    md.push('| tree | FIND / LIST | deepwork run (ms) | rg (ms) | fd (ms) | rg + fd (ms) | ratio | ratio of minima | target | met | bridges started late (ms) | its ratio (of minima) | one bridge call (ms) | deepwork\'s own part |');
    md.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of runs) {
      const where = r.id === 'run-generated' ? m.dir_display : r.tree.replace(process.env.HOME || '~', '~');
      const late = r.late ? `${ms(r.late.mean)} ± ${ms(r.late.stddev)} | ${(r.late.mean / r.both).toFixed(2)}× (${(r.late.min / (r.rg.min + r.fd.min)).toFixed(2)}×)` : '? | ?';
      md.push(`| ${r.label}: \`${where}\` | \`${r.text}\` / \`**/${r.glob}\` | ${ms(r.d.mean)} ± ${ms(r.d.stddev)} | ${ms(r.rg.mean)} ± ${ms(r.rg.stddev)} | ${ms(r.fd.mean)} ± ${ms(r.fd.stddev)} | ${ms(r.both)} | ${r.ratio.toFixed(2)}×${r.noisy || r.busy ? ' ²' : ''} | ${r.minRatio.toFixed(2)}× | ${r.target ? `≤ ${r.target.toFixed(1)}×` : '—'} | ${r.target ? (r.ratio <= r.target ? 'yes' : '**no**') : '—'} | ${late} | ${r.bridge ? `${ms(r.bridge.mean)} ± ${ms(r.bridge.stddev)}` : '?'} | ${(r.own / r.both).toFixed(2)}× |`);
    }
    const shakyRuns = runs.filter((r) => r.noisy || r.busy);
    if (shakyRuns.length) md.push('', `² Less certain than its digits say (${shakyRuns.map((r) => `${r.label}: ${[r.noisy ? 'an sd over 10% of its mean' : '', r.busy ? `other programs used ${r.other.toFixed(2)} cores beside it` : ''].filter(Boolean).join(', ')}`).join('; ')}).`);
    md.push('');
  }
  if (indexes.length) {
    md.push('The index (`tool index`: one build, then the median of 5 checks with nothing changed):');
    md.push('');
    md.push('| tree | files | heap (MB) | resident memory added (MiB) | build (ms) | check (ms) | folders checked |');
    md.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const [name, x] of indexes) md.push(`| ${name} | ${x.files} | ${(x.heap_bytes / 1e6).toFixed(1)} | ${x.rss_delta_kb === '?' ? '?' : (x.rss_delta_kb / 1024).toFixed(1)} | ${(x.build_us / 1000).toFixed(0)} | ${(x.check_us / 1000).toFixed(1)} | ${x.dirs_checked} |`);
    md.push('');
  }
  md.push('Correctness (checked before timing):');
  md.push('');
  for (const c of checks.checks) {
    md.push(`- ${c.ok ? 'ok' : '**FAIL**'}: ${c.what}: deepwork ${c.deepwork}, competitor ${c.competitor}`);
    for (const n of c.notes) md.push(`  - ${n.replace(/\|/g, '\\|')}`);
  }
  for (const h of checks.harness) md.push(`- **harness warning**: ${h}`);
  if (checks.tree) md.push(`- (info) the tree message: ${checks.tree.lines} lines, ${checks.tree.chars} chars`);
  md.push('');
  md.push(END);
  const section = md.join('\n');

  const doc = m.doc;
  let text = fs.existsSync(doc) ? fs.readFileSync(doc, 'utf8') : '# deepwork: its tools against ripgrep and fd\n\n';
  const a = text.indexOf(START), b = text.indexOf(END);
  if (a >= 0 && b > a) text = text.slice(0, a) + section + text.slice(b + END.length);
  else text = text.replace(/\n*$/, '\n\n') + section + '\n';
  fs.writeFileSync(doc, text);
  console.log(`\nwrote the generated section of ${doc}`);
}

if (cmd === 'check') doCheck();
else doReport();
