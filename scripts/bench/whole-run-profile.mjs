#!/usr/bin/env node
// Where the time of deepwork's whole run goes (the run of whole-run-ab.mjs: first message,
// FIND, LIST, two calls of the fake bridge), without a profiler's overhead: deepwork prints a
// line on stderr at each event of the run (step sent, answer received, request done, finished),
// and this script stamps each line as it arrives, over several runs, and prints the median of
// each phase next to what the same machine takes for `node` to start and exit, for `rg -F -n`
// and for `fd --type f -g`. No dependencies.
//
//   node scripts/bench/whole-run-profile.mjs --deepwork target/release/deepwork \
//        [--dir ~/.cargo/registry/src] [--text 'unsafe impl Send for'] [--glob '*.rs'] [--runs 11]

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { options, scratch, which } from './whole-run.mjs';

const { opt, deepwork, dir, text, glob } = options(
  'node whole-run-profile.mjs --deepwork PATH [--dir D] [--text T] [--glob G] [--runs N]',
);
const runs = Number(opt('runs', 11));
const { env, log, config: configFile, remove } = scratch('whole-run-profile-', { text, glob });
const config = configFile('config.json');

// The phases, each from the previous mark to the line that ends it.
const marks = [
  ['walk + tree + first message', /^step 1: sending/],
  ['bridge call 1 (Node started early)', /^step 1: answer/],
  ['check + FIND', /^step 1: FIND/],
  ['LIST', /^step 1: LIST/],
  ['step 2 message', /^step 2: sending/],
  ['bridge call 2 (Node started early)', /^step 2: answer/],
  ['finish', /^done:/],
];

function once() {
  return new Promise((resolve, reject) => {
    fs.rmSync(log, { force: true });
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    const child = spawn(deepwork, ['--config', config, '--dir', dir, 'Where is it?'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const at = [];
    let buf = '';
    child.stderr.on('data', (d) => {
      const now = ms();
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        at.push([buf.slice(0, i), now]);
        buf = buf.slice(i + 1);
      }
    });
    child.on('exit', (code) => {
      const end = ms();
      if (code !== 0) return reject(new Error(`deepwork exited ${code}`));
      const out = [];
      let prev = 0;
      for (const [name, re] of marks) {
        const hit = at.find(([l]) => re.test(l));
        if (!hit) return reject(new Error(`no line for ${name}: ${at.map(([l]) => l).join(' | ')}`));
        out.push([name, hit[1] - prev]);
        prev = hit[1];
      }
      out.push(['output + exit', end - prev]);
      out.push(['whole run', end]);
      resolve(out);
    });
  });
}

const timeOf = (program, argv) => {
  const t0 = process.hrtime.bigint();
  spawnSync(program, argv, { cwd: dir, stdio: 'ignore' });
  return Number(process.hrtime.bigint() - t0) / 1e6;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rg = which(['rg']);
const fd = which(['fdfind', 'fd']);
const phases = new Map();
const others = { 'node -e 0 (a bridge\'s floor)': [], 'rg -F -n': [], 'fd --type f -g': [] };
await once(); // warm the page cache
for (let r = 0; r < runs; r++) {
  for (const [name, t] of await once()) phases.set(name, [...(phases.get(name) ?? []), t]);
  others["node -e 0 (a bridge's floor)"].push(timeOf(process.execPath, ['-e', '0']));
  others['rg -F -n'].push(timeOf(rg, ['-F', '-n', text]));
  others['fd --type f -g'].push(timeOf(fd, ['--type', 'f', '-g', glob]));
}
remove();
console.log(`${dir}: ${runs} runs, medians; ${os.loadavg()[0].toFixed(2)} load average at the end`);
for (const [name, ts] of [...phases, ...Object.entries(others)]) console.log(`${name.padEnd(36)} ${median(ts).toFixed(1).padStart(7)} ms`);
