#!/usr/bin/env node
// The whole deepwork run with the bridge started early (the default on Linux) and late
// (`"prespawn": false`), against `rg -F -n` + `fd --type f -g`, timed in turns: each round runs
// the four commands once, in an order that rotates from round to round, so that load from other
// programs on a shared machine falls on all of them alike (hyperfine times one command's runs in
// a row). Prints the minimum, median and mean of each and the ratios. No dependencies.
//
//   node scripts/bench/whole-run-ab.mjs --deepwork target/release/deepwork \
//        [--dir ~/.cargo/registry/src] [--text 'unsafe impl Send for'] [--glob '*.rs'] \
//        [--rounds 15] [--warmup 2] [--baseline OLD_DEEPWORK]
//
// `--baseline` adds a fifth command, another deepwork binary (say, the previous commit's) with
// the bridges started early, so that a change is measured against what it replaces in the
// same rounds: on a shared machine, two benchmark runs minutes apart see different loads.
//
// The run is the benchmark's (scripts/bench-deepwork.sh): the fake bridge's first answer asks
// for a FIND and a LIST, its second for nothing.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { options, scratch, which } from './whole-run.mjs';

const { opt, deepwork, dir, text, glob } = options(
  'node whole-run-ab.mjs --deepwork PATH [--dir D] [--text T] [--glob G] [--rounds N] [--warmup N] [--baseline PATH]',
);
const baseline = opt('baseline');
const rounds = Number(opt('rounds', 15));
const warmup = Number(opt('warmup', 2));
const rg = which(['rg']);
const fd = which(['fdfind', 'fd']);
const { env, log, config, remove } = scratch('whole-run-ab-', { text, glob });
const commands = [
  ['early', deepwork, ['--config', config('early.json', {}), '--dir', dir, 'Where is it?']],
  ['late', deepwork, ['--config', config('late.json', { prespawn: false }), '--dir', dir, 'Where is it?']],
  ['rg', rg, ['-F', '-n', text]],
  ['fd', fd, ['--type', 'f', '-g', glob]],
];
if (baseline) commands.push(['base', path.resolve(baseline), ['--config', config('base.json', {}), '--dir', dir, 'Where is it?']]);

const loadStart = os.loadavg()[0];
const times = Object.fromEntries(commands.map(([name]) => [name, []]));
for (let r = -warmup; r < rounds; r++) {
  for (let k = 0; k < commands.length; k++) {
    const [name, program, argv] = commands[(k + Math.max(r, 0)) % commands.length];
    fs.rmSync(log, { force: true });
    const t0 = process.hrtime.bigint();
    const res = spawnSync(program, argv, { cwd: dir, env, stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.status !== 0 && !(name === 'rg' && res.status === 1)) {
      console.error(`${name} exited ${res.status}`);
      process.exit(1);
    }
    if (r >= 0) times[name].push(ms);
  }
}
remove();

const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { min: s[0], median: mid, mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const st = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, stat(v)]));
const f = (x) => x.toFixed(1);
const pairs = (name) => times[name].map((t, i) => t / (times.rg[i] + times.fd[i]));
console.log(`${dir}: FIND ${JSON.stringify(text)}, LIST **/${glob}; ${rounds} rounds after ${warmup} warm-up rounds, order rotating; load average ${loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end`);
for (const [k, s] of Object.entries(st)) console.log(`${k.padEnd(6)} min ${f(s.min)} ms  median ${f(s.median)} ms  mean ${f(s.mean)} ms`);
for (const m of ['min', 'median', 'mean']) {
  const both = st.rg[m] + st.fd[m];
  const base = baseline ? `, base ${(st.base[m] / both).toFixed(2)}×` : '';
  console.log(`${m.padEnd(6)} rg+fd ${f(both)} ms: early ${(st.early[m] / both).toFixed(2)}×, late ${(st.late[m] / both).toFixed(2)}×${base}`);
}
for (const name of baseline ? ['early', 'late', 'base'] : ['early', 'late']) {
  const r = stat(pairs(name));
  const s = [...pairs(name)].sort((a, b) => a - b);
  console.log(
    `paired ${name}: median of ${rounds} per-round ratios ${r.median.toFixed(2)}× (range ${s[0].toFixed(2)}–${s[s.length - 1].toFixed(2)})`,
  );
}
if (baseline) {
  const ratios = times.early.map((t, i) => t / times.base[i]);
  const r = stat(ratios);
  const s = [...ratios].sort((a, b) => a - b);
  console.log(`paired early / base: median of ${rounds} per-round ratios ${r.median.toFixed(2)}× (range ${s[0].toFixed(2)}–${s[s.length - 1].toFixed(2)})`);
}
