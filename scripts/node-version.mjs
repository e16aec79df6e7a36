#!/usr/bin/env node
// Whether this Node.js is one the repository declares (package.json `engines.node`), and what
// to do when it is not. The README's two commands run it before anything else:
//
//   node scripts/node-version.mjs      exit 0, or 1 with what is needed on stderr
//
// The declared range is the one our own tools need (vite and its Svelte plugin are the
// strictest). `@anthropic-ai/claude-code` declares node >= 22, but what it installs is a native
// binary that does not run on Node: on 20.19+ npm only warns (EBADENGINE), and that warning is
// expected (tests/node/engines.test.mjs holds both to the packages' own declarations).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `a.b.c` as numbers (missing parts 0). */
export function parse(v) {
  const [a = 0, b = 0, c = 0] = String(v).trim().replace(/^v/, '').split('.').map((x) => Number.parseInt(x, 10) || 0);
  return [a, b, c];
}

function cmp(x, y) {
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/** Whether version `v` is in `range`: `||` of `^x.y.z`, `>=x.y.z`, `>= x`, `x.y.z`. */
export function satisfies(v, range) {
  const ver = parse(v);
  return range.split('||').some((alt) => {
    const a = alt.trim();
    if (a.startsWith('^')) {
      const low = parse(a.slice(1));
      return cmp(ver, low) >= 0 && ver[0] === low[0];
    }
    if (a.startsWith('>=')) return cmp(ver, parse(a.slice(2))) >= 0;
    return cmp(ver, parse(a)) === 0;
  });
}

/** The range package.json declares. */
export function declared() {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
}

/** What is wrong with Node.js `version` for `range`, in words; `null` when nothing. */
export function problem(version, range) {
  if (satisfies(version, range)) return null;
  return (
    `Node.js ${version} is not one this repository runs on: it needs ${range} ` +
    "(vite, which builds pult's front end, and its Svelte plugin need that). Debian 12's own " +
    'nodejs is 18: take Node 22 LTS from nodejs.org or NodeSource (deb.nodesource.com), then ' +
    'run this again.'
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wrong = problem(process.versions.node, declared());
  if (wrong) {
    console.error(`error: ${wrong}`);
    process.exit(1);
  }
}
