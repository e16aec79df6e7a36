// The Node.js versions the repository declares are true: every version package.json's
// `engines.node` admits is one that each direct dependency declares it runs on, except the
// pinned Claude Code CLI, whose declared floor (22) is not what it needs (a native binary; on
// node 20 npm only warns EBADENGINE). `scripts/node-version.mjs`, which the README's commands
// run first, reads the same range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { declared, problem, satisfies } from '../../scripts/node-version.mjs';

const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const deps = { ...pkg.dependencies, ...pkg.devDependencies };
/** A dependency whose declared range is not what it needs, and why. */
const EXEMPT = { '@anthropic-ai/claude-code': 'a native binary: it runs without Node' };

/** The lowest versions of each alternative of `range`, and one later in each. */
function probes(range) {
  return range.split('||').flatMap((alt) => {
    const low = alt.trim().replace(/^(\^|>=)\s*/, '');
    const [a, b] = low.split('.').map(Number);
    return [low, `${a}.${(b || 0) + 5}.0`, ...(alt.includes('>=') ? [`${a + 1}.0.0`, `${a + 2}.0.0`] : [])];
  });
}

test('the declared node range is within every dependency’s own', () => {
  const ours = declared();
  assert.equal(ours, pkg.engines.node);
  const wrong = [];
  for (const name of Object.keys(deps)) {
    if (EXEMPT[name]) continue;
    const theirs = JSON.parse(fs.readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')).engines?.node;
    if (!theirs) continue;
    for (const v of probes(ours)) if (!satisfies(v, theirs)) wrong.push(`${name} (${theirs}) refuses node ${v}`);
  }
  assert.deepEqual(wrong, []);
});

test('the range reader reads the forms the packages use', () => {
  assert.ok(satisfies('20.19.0', '^20.19.0 || >=22.12.0'));
  assert.ok(!satisfies('20.18.3', '^20.19.0 || >=22.12.0'));
  assert.ok(!satisfies('21.7.0', '^20.19.0 || >=22.12.0'));
  assert.ok(satisfies('24.1.0', '^20.19 || ^22.12 || >=24'));
  assert.ok(satisfies('18.0.0', '>= 18.0.0'));
  assert.ok(!satisfies('22.11.0', '^20.19 || ^22.12 || >=24'));
});

test('every exemption is still a dependency and still declares more than it needs', () => {
  for (const name of Object.keys(EXEMPT)) {
    assert.ok(deps[name], `${name} is no longer a dependency`);
    const theirs = JSON.parse(fs.readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')).engines?.node;
    assert.ok(theirs && !satisfies(lowest(), theirs), `${name} declares ${theirs}: drop the exemption`);
  }
});

/** The lowest version we admit. */
function lowest() {
  return probes(declared())[0];
}

test('an older node is told what is needed and where to get it; a good one nothing', () => {
  const said = problem('18.19.0', declared());
  assert.match(said, /18\.19\.0/);
  assert.ok(said.includes(declared()) && said.includes('nodejs.org'), said);
  assert.equal(problem('20.19.0', declared()), null);
  assert.equal(problem('22.12.0', declared()), null);
  assert.notEqual(problem('23.1.0', declared()), null);
});
