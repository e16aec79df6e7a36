#!/usr/bin/env node
// Deterministic synthetic project tree for the deepwork benchmarks (scripts/bench-deepwork.sh).
//
//   node gen-tree.mjs <dir> [--files 100000] [--seed 1] [--force]
//
// --files is the number of regular files written (the .git folder aside), of which about 90% are
// visible to an ignore-aware walk and the rest are ignored (node_modules/, target/, *.log, a
// nested .gitignore) or hidden (dotfiles, dot folders). Everything comes from one seeded PRNG, so
// the same parameters give the same tree byte for byte.
//
// The tree holds:
//   - nested folders (depth up to 8) with a few wide ones (hundreds to thousands of files);
//   - small text files (.rs .js .mjs .ts .md .json .txt) of real-looking lines, some CRLF, some
//     without a final newline, a few empty, a few with a non-UTF-8 byte;
//   - a few large text files (1-10 MB), one minified .js with very long lines;
//   - a few binary files (NUL bytes in their first bytes);
//   - a .gitignore (node_modules/, target/, *.log with one negation), a nested .gitignore,
//     hidden files and folders, one symlink to a file;
//   - RARE, a literal planted on exactly RARE_LINES visible lines (plus decoys in ignored,
//     hidden and binary files and in a different case, none of which may be found);
//   - COMMON, a literal on many lines.
// The folder is `git init`ed so that ripgrep and fd honour .gitignore the way deepwork does.
// A stamp (.bench-stamp.json, hidden, so no walker sees it) records the parameters and the
// tree's statistics; with the same parameters a second run does nothing.

import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export const GENERATOR_VERSION = 3;
export const RARE = 'QUASAR_NEEDLE_41';
export const RARE_LINES = 37;
export const COMMON = 'config';
const STAMP = '.bench-stamp.json';

// ---------------------------------------------------------------- arguments
function parseArgs(argv) {
  const out = { dir: null, files: 100000, seed: 1, force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--files') out.files = Number(val());
    else if (a === '--seed') out.seed = Number(val());
    else if (a === '--force') out.force = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node gen-tree.mjs <dir> [--files 100000] [--seed 1] [--force]');
      process.exit(0);
    } else if (a.startsWith('-')) die(`unknown option ${a}`);
    else if (out.dir === null) out.dir = a;
    else die(`unexpected argument ${a}`);
  }
  if (!out.dir) die('usage: node gen-tree.mjs <dir> [--files 100000] [--seed 1] [--force]');
  if (!Number.isInteger(out.files) || out.files < 500) die('--files must be an integer >= 500');
  if (!Number.isInteger(out.seed)) die('--seed must be an integer');
  return out;
}

function die(msg) {
  console.error(`gen-tree: ${msg}`);
  process.exit(2);
}

// ---------------------------------------------------------------- PRNG (mulberry32)
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let rnd = mulberry32(1);
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)); // inclusive
const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
const chance = (p) => rnd() < p;
function weighted(pairs) {
  let total = 0;
  for (const [, w] of pairs) total += w;
  let r = rnd() * total;
  for (const [v, w] of pairs) {
    if ((r -= w) < 0) return v;
  }
  return pairs[pairs.length - 1][0];
}
function shuffle(arr) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return arr;
}

// ---------------------------------------------------------------- vocabulary
const WORDS = (
  'account active adapter agent alpha api app archive asset audit auth backend batch ' +
  'bridge buffer build cache call card chain channel chart check client cloud codec ' +
  'column command common compile core counter crypto cursor daemon data debug delta ' +
  'device diff digest domain draft driver engine entry error event export feature ' +
  'fetch field filter flow format frame gate graph guard handler hash header helper ' +
  'history hook host index input item job journal kernel key label layout ledger limit ' +
  'line link list loader local lock log loop mapper market matrix media merge message ' +
  'meta metric model module monitor mount network node notice object order output ' +
  'packet page panel parser patch path peer pipeline plugin policy pool port preview ' +
  'probe process profile proxy queue quota range reader record region registry render ' +
  'report request resolver resource result review route router runtime sample schema ' +
  'scope search section sender server service session setting shard signal sketch slot ' +
  'snapshot socket source span stage state status step storage store stream style sync ' +
  'table target task template tenant theme thread ticket timer token trace tracker ' +
  'transport tree trigger upload user util value vector view viewer worker writer zone'
).split(' ');
const VERBS = 'load save parse build render merge fetch apply check resolve encode decode flush open close read write send receive update create delete find scan sort split join'.split(' ');
const TYPES = 'u32 u64 usize i64 bool String Vec<u8> Option<String> Result<(), Error> &str'.split(' ');
const ident = () => `${pick(VERBS)}_${pick(WORDS)}`;
const camel = () => {
  const w = pick(WORDS);
  return pick(VERBS) + w[0].toUpperCase() + w.slice(1);
};
const Pascal = () => {
  const w1 = pick(WORDS), w2 = pick(WORDS);
  return w1[0].toUpperCase() + w1.slice(1) + w2[0].toUpperCase() + w2.slice(1);
};
const sentence = (lo = 6, hi = 16) => {
  const n = int(lo, hi);
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(pick(WORDS));
  const s = parts.join(' ');
  return s[0].toUpperCase() + s.slice(1) + '.';
};

// ---------------------------------------------------------------- line generators per language
// COMMON appears in some templates: about one line in ~15 carries it.
const GEN = {
  rs() {
    return weighted([
      [() => `    let ${ident()} = ${ident()}(&${pick(WORDS)}, ${int(0, 999)})?;`, 5],
      [() => `    if ${pick(WORDS)}.len() > ${int(1, 4096)} {`, 2],
      [() => `        return Err(Error::${Pascal()}(${pick(WORDS)}.clone()));`, 1],
      [() => `    }`, 3],
      [() => `    // ${sentence()}`, 2],
      [() => `pub fn ${ident()}(${pick(WORDS)}: ${pick(TYPES)}, ${pick(WORDS)}: &${Pascal()}) -> ${pick(TYPES)} {`, 1],
      [() => `    let ${pick(WORDS)} = self.${COMMON}.${pick(WORDS)}.${ident()}();`, 1],
      [() => `    tracing::debug!("${pick(VERBS)} {} {}", ${pick(WORDS)}, ${pick(WORDS)});`, 1],
      [() => `use crate::${pick(WORDS)}::{${Pascal()}, ${Pascal()}};`, 1],
      [() => `    ${pick(WORDS)}.push(${ident()}(${int(0, 99)}));`, 2],
      [() => ``, 2],
    ])();
  },
  js() {
    return weighted([
      [() => `  const ${camel()} = await ${camel()}(${pick(WORDS)}, ${int(0, 999)});`, 5],
      [() => `  if (${pick(WORDS)}.length > ${int(1, 4096)}) {`, 2],
      [() => `    throw new Error('${sentence(3, 8)}');`, 1],
      [() => `  }`, 3],
      [() => `  // ${sentence()}`, 2],
      [() => `export function ${camel()}(${pick(WORDS)}, ${pick(WORDS)} = {}) {`, 1],
      [() => `  const { ${pick(WORDS)}, ${pick(WORDS)} } = ${COMMON}.${pick(WORDS)};`, 1],
      [() => `  console.log(\`${pick(VERBS)} \${${pick(WORDS)}}\`);`, 1],
      [() => `import { ${camel()} } from './${pick(WORDS)}.js';`, 1],
      [() => `  ${pick(WORDS)}.push(${camel()}(${int(0, 99)}));`, 2],
      [() => ``, 2],
    ])();
  },
  ts() {
    return weighted([
      [() => `  const ${camel()}: ${Pascal()} = ${camel()}(${pick(WORDS)});`, 5],
      [() => `  if (!${pick(WORDS)}) {`, 2],
      [() => `    return undefined;`, 1],
      [() => `  }`, 3],
      [() => `  /** ${sentence()} */`, 2],
      [() => `export interface ${Pascal()} { ${pick(WORDS)}: string; ${pick(WORDS)}?: number }`, 1],
      [() => `  readonly ${COMMON}: ${Pascal()}Config;`, 1],
      [() => `import type { ${Pascal()} } from '../${pick(WORDS)}';`, 1],
      [() => `  ${pick(WORDS)}.set('${pick(WORDS)}', ${int(0, 99)});`, 2],
      [() => ``, 2],
    ])();
  },
  md() {
    return weighted([
      [() => sentence(8, 24), 6],
      [() => `## ${Pascal()}`, 1],
      [() => `- ${sentence(3, 10)}`, 3],
      [() => `See the \`${COMMON}\` section of \`${pick(WORDS)}.toml\`.`, 1],
      [() => '```', 1],
      [() => ``, 3],
    ])();
  },
  json() {
    return weighted([
      [() => `  "${pick(WORDS)}": "${pick(WORDS)}-${int(0, 9999)}",`, 5],
      [() => `  "${pick(WORDS)}": ${int(0, 100000)},`, 3],
      [() => `  "${pick(WORDS)}": [${int(0, 9)}, ${int(0, 9)}, ${int(0, 9)}],`, 1],
      [() => `  "${COMMON}": { "${pick(WORDS)}": true },`, 1],
    ])();
  },
  txt() {
    return weighted([
      [() => sentence(5, 20), 8],
      [() => `${pick(WORDS)}=${pick(WORDS)}_${int(0, 999)}`, 2],
      [() => `${COMMON}.${pick(WORDS)} = ${int(0, 99)}`, 1],
      [() => ``, 2],
    ])();
  },
};
GEN.mjs = GEN.js;
GEN.log = GEN.txt;
GEN.yml = GEN.txt;
GEN.toml = GEN.txt;
GEN.html = GEN.md;

const COMMENT = {
  rs: (s) => `    // ${s}`,
  js: (s) => `  // ${s}`,
  mjs: (s) => `  // ${s}`,
  ts: (s) => `  // ${s}`,
  md: (s) => `Note: ${s}`,
  json: (s) => `  "note": "${s}",`,
  txt: (s) => s,
  log: (s) => s,
  yml: (s) => `# ${s}`,
  toml: (s) => `# ${s}`,
  html: (s) => `<!-- ${s} -->`,
};

const EXT_WEIGHTS = [
  ['rs', 26], ['js', 18], ['ts', 16], ['mjs', 6], ['md', 12], ['json', 12], ['txt', 10],
];

function textLines(ext, lo, hi) {
  const gen = GEN[ext] || GEN.txt;
  const n = int(lo, hi);
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(gen());
  return lines;
}

// ---------------------------------------------------------------- file plan
// Every file is planned first (path, kind, category), then needles are planted, then all is
// written. category: 'visible' | 'ignored' | 'hidden' | 'symlink'.
function plan(N) {
  const files = []; // {path, kind: 'text'|'big'|'minjs'|'binary'|'raw', ext, cat, lines?, data?}
  const used = new Set();
  const add = (f) => {
    if (used.has(f.path)) return false;
    used.add(f.path);
    files.push(f);
    return true;
  };

  const nIgnored = Math.round(N * 0.1);
  const nHidden = Math.max(20, Math.round(N * 0.004));
  const nBinary = Math.max(6, Math.round(N * 0.0006));
  const nBig = 5;
  const nVisibleSmall = N - nIgnored - nHidden - nBinary - nBig - 5; // the 3 .gitignore files and 2 fixed edge-case files

  // ---- folders: a tree of visible folders, depth <= 8
  const TOP = ['src', 'crates', 'packages', 'docs', 'tests', 'scripts', 'examples', 'assets', 'tools', 'services', 'vendor', 'web'];
  const dirs = TOP.map((d) => ({ path: d, depth: 1 }));
  const nDirs = Math.max(40, Math.round(nVisibleSmall / 22));
  const dirNames = new Set(dirs.map((d) => d.path));
  while (dirs.length < nDirs) {
    // favour shallow-to-middle parents so the tree is deep in places but not a chain
    const parent = dirs[Math.floor(Math.pow(rnd(), 0.7) * dirs.length)];
    if (parent.depth >= 8) continue;
    const name = chance(0.15) ? `${pick(WORDS)}-${pick(WORDS)}` : pick(WORDS);
    const p = `${parent.path}/${name}`;
    if (dirNames.has(p)) continue;
    dirNames.add(p);
    dirs.push({ path: p, depth: parent.depth + 1 });
  }
  // a folder called backup that is NOT at the top level: deepwork leaves out only /backup/
  const nestedBackup = { path: 'src/backup', depth: 2 };
  dirs.push(nestedBackup);

  // ---- wide folders get a fixed share; the rest is spread at random
  const scale = N / 100000;
  const wideShares = [2500, 1800, 1200, 800, 600].map((x) => Math.max(20, Math.round(x * scale)));
  const wideDirs = [
    { path: 'assets/locales', depth: 2 },
    { path: 'tests/fixtures/snapshots', depth: 3 },
    { path: 'docs/api/generated', depth: 3 },
    { path: 'src/generated/protocol/messages', depth: 4 },
    { path: 'web/components/icons', depth: 3 },
  ];
  const counts = new Map();
  wideDirs.forEach((d, i) => counts.set(d.path, wideShares[i]));
  let remaining = nVisibleSmall - wideShares.reduce((a, b) => a + b, 0);
  const allDirs = dirs.concat(wideDirs);
  for (; remaining > 0; remaining--) {
    const d = dirs[Math.floor(rnd() * dirs.length)];
    counts.set(d.path, (counts.get(d.path) || 0) + 1);
  }

  const fileName = (dir, ext) => {
    for (;;) {
      const base = chance(0.5) ? `${pick(WORDS)}_${pick(WORDS)}` : `${pick(WORDS)}${chance(0.3) ? int(1, 99) : ''}`;
      const p = `${dir}/${base}.${ext}`;
      if (!used.has(p)) return p;
    }
  };

  for (const d of allDirs) {
    const c = counts.get(d.path) || 0;
    for (let i = 0; i < c; i++) {
      const ext = weighted(EXT_WEIGHTS);
      add({ path: fileName(d.path, ext), kind: 'text', ext, cat: 'visible' });
    }
  }

  // ---- big files (1-10 MB) and a minified bundle with very long lines
  add({ path: 'docs/reference/full-reference.md', kind: 'big', ext: 'md', cat: 'visible', size: 6_000_000 });
  add({ path: 'tests/fixtures/large/dataset.json', kind: 'big', ext: 'json', cat: 'visible', size: 3_000_000 });
  add({ path: 'assets/corpus/words.txt', kind: 'big', ext: 'txt', cat: 'visible', size: 9_500_000 });
  add({ path: 'src/generated/schema_dump.rs', kind: 'big', ext: 'rs', cat: 'visible', size: 1_200_000 });
  add({ path: 'vendor/bundle/app.min.js', kind: 'minjs', ext: 'js', cat: 'visible', size: 2_000_000 });

  // ---- binaries: NUL bytes in the first 16 bytes
  const BIN = [['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]], ['wasm', [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]], ['bin', [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]]];
  for (let i = 0; i < nBinary; i++) {
    const [ext, magic] = pick(BIN);
    const dir = i % 2 ? 'assets/images' : pick(dirs).path;
    add({ path: fileName(dir, ext), kind: 'binary', ext, cat: 'visible', magic, size: int(1024, 96 * 1024) });
  }

  // ---- ignore files
  add({
    path: '.gitignore', kind: 'raw', ext: 'txt', cat: 'hidden',
    data: '# build output and dependencies\nnode_modules/\n/target/\n*.log\n!keep-this.log\n/out/\n',
  });
  add({
    path: 'services/.gitignore', kind: 'raw', ext: 'txt', cat: 'hidden',
    data: '# generated per service\ngenerated/\n*.tmp.json\n',
  });
  // a third, nested in node_modules (ignored itself, never read)
  add({ path: 'node_modules/.gitignore', kind: 'raw', ext: 'txt', cat: 'ignored', data: '*\n' });

  // ---- ignored files (~10%): node_modules (deep), target/, *.log, services/*/generated/, out/
  const nNodeModules = Math.round(nIgnored * 0.75);
  const nTmp = Math.max(5, Math.round(nIgnored * 0.01));
  const pkgs = [];
  for (let i = 0; i < Math.max(20, Math.round(nNodeModules / 40)); i++) {
    const scoped = chance(0.15);
    pkgs.push(scoped ? `node_modules/@${pick(WORDS)}/${pick(WORDS)}-${pick(WORDS)}` : `node_modules/${pick(WORDS)}-${pick(WORDS)}${int(1, 9)}`);
  }
  let ign = 1; // node_modules/.gitignore
  for (let i = 0; i < nNodeModules; i++) {
    const pkg = pick(pkgs);
    const sub = weighted([['', 3], ['/lib', 3], ['/dist', 2], ['/src/internal', 1], ['/node_modules/' + pick(WORDS), 1]]);
    const ext = weighted([['js', 6], ['mjs', 1], ['ts', 2], ['json', 1], ['md', 1]]);
    if (add({ path: fileName(pkg + sub, ext), kind: 'text', ext, cat: 'ignored' })) ign++;
  }
  const targetDirs = ['target/release/deps', 'target/release/build', 'target/debug/incremental', 'target/debug/.fingerprint'];
  while (ign < nIgnored - nTmp) {
    const r = rnd();
    if (r < 0.6) {
      const d = pick(targetDirs);
      const ext = pick(['txt', 'json', 'rs']);
      if (add({ path: fileName(d, ext), kind: 'text', ext, cat: 'ignored' })) ign++;
    } else if (r < 0.8) {
      const d = pick(dirs).path;
      if (add({ path: fileName(d, 'log'), kind: 'text', ext: 'log', cat: 'ignored' })) ign++;
    } else if (r < 0.9) {
      const d = `services/${pick(WORDS)}/generated`;
      const ext = pick(['ts', 'js', 'json']);
      if (add({ path: fileName(d, ext), kind: 'text', ext, cat: 'ignored' })) ign++;
    } else {
      const ext = pick(['js', 'md']);
      if (add({ path: fileName('out', ext), kind: 'text', ext, cat: 'ignored' })) ign++;
    }
  }
  // a nested-gitignore pattern match inside a visible folder, and a negation
  while (ign < nIgnored) {
    const d = `services/${pick(WORDS)}`;
    if (add({ path: fileName(d, 'tmp.json'), kind: 'text', ext: 'json', cat: 'ignored' })) ign++;
  }
  add({ path: 'scripts/keep-this.log', kind: 'text', ext: 'log', cat: 'visible' });
  // the target/ rule is anchored (/target/): a nested target folder stays visible
  add({ path: 'crates/target/README.md', kind: 'text', ext: 'md', cat: 'visible' });

  // ---- hidden files and folders
  const hiddenDirs = ['.github/workflows', '.cache/eslint', '.vscode', '.config/tools', 'src/.internal', 'docs/.drafts'];
  let hid = 0;
  const hiddenFixed = ['.env', '.editorconfig', '.prettierrc.json', 'src/.eslintrc.json', 'web/.babelrc'];
  for (const p of hiddenFixed) if (add({ path: p, kind: 'text', ext: 'txt', cat: 'hidden' })) hid++;
  while (hid < nHidden) {
    const d = pick(hiddenDirs);
    const ext = pick(['yml', 'json', 'txt', 'md']);
    if (add({ path: fileName(d, ext), kind: 'text', ext, cat: 'hidden' })) hid++;
  }

  // ---- a symlink to a file (not followed by rg/fd; not a regular file)
  add({ path: 'docs/LATEST.md', kind: 'symlink', target: 'reference/full-reference.md', cat: 'symlink' });

  return { files, dirs: allDirs };
}

// ---------------------------------------------------------------- content
function plant(files) {
  // text files that are small and visible, by extension kind we can comment in
  const visibleText = files.filter((f) => f.kind === 'text' && f.cat === 'visible' && f.ext in COMMENT);
  shuffle(visibleText);
  const needleLine = (f, i) => COMMENT[f.ext](`${i % 2 ? 'see' : 'ref'} ${RARE} (${pick(WORDS)} ${i})`);
  // 37 lines: one file holds 2 (on different lines), one line carries it twice, one sits deep in a
  // big file, one in a CRLF file, the rest one per file.
  let placed = 0;
  const plants = []; // {file, line}
  const rareFiles = visibleText.slice(0, 40);
  let k = 0;
  const two = rareFiles[k++];
  two.needles = [needleLine(two, placed++), needleLine(two, placed++)];
  const twice = rareFiles[k++];
  twice.needles = [COMMENT[twice.ext](`${RARE} and again ${RARE}`)];
  placed++;
  const crlf = rareFiles[k++];
  crlf.crlf = true;
  crlf.needles = [needleLine(crlf, placed++)];
  const big = files.find((f) => f.path === 'assets/corpus/words.txt');
  big.needleAt = 0.83; // fraction of the file
  placed++;
  while (placed < RARE_LINES) {
    const f = rareFiles[k++];
    f.needles = [needleLine(f, placed++)];
  }
  for (const f of rareFiles) if (f.needles) plants.push(f);

  // decoys: must not be found
  const decoy = (pred, n, mk) => {
    const pool = files.filter((f) => f.kind === 'text' && !f.needles && pred(f));
    shuffle(pool);
    for (const f of pool.slice(0, n)) f.needles = [mk(f)];
  };
  decoy((f) => f.cat === 'ignored' && f.path.startsWith('node_modules/'), 5, (f) => COMMENT[f.ext](`${RARE} in a dependency`));
  decoy((f) => f.cat === 'ignored' && f.path.startsWith('target/'), 2, (f) => COMMENT[f.ext](`${RARE} in build output`));
  decoy((f) => f.cat === 'ignored' && f.ext === 'log', 2, (f) => COMMENT[f.ext](`${RARE} in a log`));
  decoy((f) => f.cat === 'hidden', 3, (f) => COMMENT[f.ext] ? COMMENT[f.ext](`${RARE} hidden`) : `${RARE} hidden`);
  decoy((f) => f.cat === 'visible' && f.ext in COMMENT, 3, (f) => COMMENT[f.ext](RARE.toLowerCase() + ' other case'));
  decoy((f) => f.cat === 'visible' && f.ext in COMMENT, 2, (f) => COMMENT[f.ext](RARE.slice(0, 10) + ' ' + RARE.slice(10) + ' split'));
  const bin = files.find((f) => f.kind === 'binary');
  bin.needle = true; // the text after the NUL bytes: a binary file is not searched
}

function smallText(f) {
  const lines = textLines(f.ext, ...weighted([[[3, 15], 4], [[15, 60], 5], [[60, 160], 1]]));
  if (f.ext === 'rs' && chance(0.7)) lines.unshift(`//! ${sentence()}`, '');
  if (f.ext === 'json') {
    lines.unshift('{');
    lines.push(`  "${pick(WORDS)}": null`, '}');
  }
  if (f.needles) {
    for (const n of f.needles) lines.splice(int(1, lines.length), 0, n);
  }
  let crlf = f.crlf || chance(0.02);
  if (f.needles) crlf = !!f.crlf;
  let s = lines.join(crlf ? '\r\n' : '\n');
  if (!chance(0.05)) s += crlf ? '\r\n' : '\n';
  let buf = Buffer.from(s, 'utf8');
  // a few legacy files with a Latin-1 byte (not UTF-8, no NUL): searchable as text by ripgrep
  if (!f.needles && chance(0.003) && buf.length > 10) {
    const extra = Buffer.from(`# caf\xe9 ${COMMON} latin1\n`, 'latin1');
    buf = Buffer.concat([buf, extra]);
  }
  return buf;
}

function bigText(f) {
  const parts = [];
  let size = 0;
  let needleDone = !f.needleAt;
  while (size < f.size) {
    const line = (GEN[f.ext] || GEN.txt)();
    parts.push(line);
    size += line.length + 1;
    if (!needleDone && size >= f.size * f.needleAt) {
      parts.push(COMMENT[f.ext](`deep ${RARE} in a big file`));
      needleDone = true;
    }
  }
  return Buffer.from(parts.join('\n') + '\n', 'utf8');
}

function minJs(f) {
  // a few very long lines, as in a minified bundle
  const lines = [];
  let size = 0;
  while (size < f.size) {
    const chunk = [];
    const target = int(100_000, 400_000);
    let n = 0;
    while (n < target) {
      const s = `function ${camel()}(a,b){return a.${pick(WORDS)}(b,${int(0, 99)})}var ${pick(WORDS)}=${int(0, 9999)};`;
      chunk.push(s);
      n += s.length;
    }
    const line = chunk.join('');
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}

function binary(f) {
  const buf = Buffer.alloc(f.size);
  Buffer.from(f.magic).copy(buf, 0);
  for (let i = f.magic.length; i < f.size; i++) buf[i] = Math.floor(rnd() * 256);
  if (f.needle) Buffer.from(`\n${RARE}\n`, 'utf8').copy(buf, Math.min(200, f.size - 40));
  return buf;
}

// ---------------------------------------------------------------- main
function readStamp(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, STAMP), 'utf8'));
  } catch {
    return null;
  }
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const dir = path.resolve(args.dir);
  // the generator's own hash: an edited generator makes a new tree
  const self = fs.readFileSync(fileURLToPath(import.meta.url));
  const source = createHash('sha256').update(self).digest('hex').slice(0, 12);
  const params = { generator: GENERATOR_VERSION, source, files: args.files, seed: args.seed };
  const stamp = readStamp(dir);
  if (stamp && JSON.stringify(stamp.params) === JSON.stringify(params) && !args.force) {
    console.error(`gen-tree: ${dir} is up to date (${stamp.stats.files} files, ${stamp.stats.bytes} bytes); nothing to do`);
    return;
  }
  if (fs.existsSync(dir)) {
    const entries = fs.readdirSync(dir);
    if (entries.length && !stamp && !args.force) {
      die(`${dir} exists, is not empty and has no ${STAMP}: refusing to overwrite it (use --force)`);
    }
    if (entries.length) {
      console.error(`gen-tree: removing the old tree at ${dir}`);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const t0 = Date.now();
  rnd = mulberry32(args.seed);
  const { files } = plan(args.files);
  plant(files);

  fs.mkdirSync(dir, { recursive: true });
  const made = new Set();
  const stats = { files: 0, bytes: 0, visible: 0, ignored: 0, hidden: 0, symlinks: 0, binary: 0, big: 0, visible_rs: 0, max_depth: 0 };
  for (const f of files) {
    const abs = path.join(dir, f.path);
    const parent = path.dirname(abs);
    if (!made.has(parent)) {
      fs.mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    stats.max_depth = Math.max(stats.max_depth, f.path.split('/').length - 1);
    if (f.kind === 'symlink') {
      fs.symlinkSync(f.target, abs);
      stats.symlinks++;
      continue;
    }
    let buf;
    if (f.kind === 'raw') buf = Buffer.from(f.data, 'utf8');
    else if (f.kind === 'big') buf = bigText(f);
    else if (f.kind === 'minjs') buf = minJs(f);
    else if (f.kind === 'binary') buf = binary(f);
    else buf = chance(0.004) && !f.needles ? Buffer.alloc(0) : smallText(f);
    fs.writeFileSync(abs, buf);
    stats.files++;
    stats.bytes += buf.length;
    stats[f.cat]++;
    if (f.kind === 'binary') stats.binary++;
    if (f.kind === 'big' || f.kind === 'minjs') stats.big++;
    if (f.cat === 'visible' && f.path.endsWith('.rs')) stats.visible_rs++;
  }
  execFileSync('git', ['init', '-q', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const out = {
    params,
    rare: RARE,
    rare_lines: RARE_LINES,
    common: COMMON,
    stats,
    generated_ms: Date.now() - t0,
    note: 'written by scripts/bench/gen-tree.mjs; visible = what an ignore-aware walk (rg, fd, deepwork) sees',
  };
  fs.writeFileSync(path.join(dir, STAMP), JSON.stringify(out, null, 2) + '\n');
  console.error(`gen-tree: wrote ${stats.files} files (${stats.visible} visible, ${stats.ignored} ignored, ${stats.hidden} hidden), ${(stats.bytes / 1e6).toFixed(1)} MB into ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

main();
