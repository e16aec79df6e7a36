// What the whole-run benchmarks share (whole-run-ab.mjs, whole-run-profile.mjs): their options,
// the run they time (the fake bridge's first answer asks for a FIND and a LIST, its second for
// nothing), the tools they compare with, and a scratch folder for the bridge's files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The options: `--deepwork` (required; made absolute, since every command runs in the tree's
 * folder), `--dir`, `--text`, `--glob`, and `opt(name, default)` for a script's own. */
export function options(usage) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : dflt;
  };
  const deepwork = opt('deepwork');
  if (!deepwork) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return {
    opt,
    deepwork: path.resolve(deepwork),
    dir: path.resolve(opt('dir', path.join(os.homedir(), '.cargo/registry/src'))),
    text: opt('text', 'unsafe impl Send for'),
    glob: opt('glob', '*.rs'),
  };
}

/** The first of `names` on PATH. */
export const which = (names) => names.find((n) => spawnSync('sh', ['-c', `command -v ${n}`]).status === 0);

/** A scratch folder with the fake bridge's scenario; `config(name, extra)` writes a deepwork
 * config there, `env` is what every deepwork run gets, `log` the bridge's calls (cleared before
 * each run), `remove()` takes it all away. */
export function scratch(prefix, { text, glob }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const scenario = path.join(tmp, 'scenario.json');
  fs.writeFileSync(scenario, JSON.stringify({ steps: [{ answer: `=== FIND: ${text} ===\n=== LIST: **/${glob} ===\n` }, { answer: 'Done.' }] }));
  const log = path.join(tmp, 'calls.jsonl');
  const bridge = path.join(root, 'tests/fixtures/fake-bridge.mjs');
  return {
    log,
    env: { ...process.env, FAKE_BRIDGE_SCENARIO: scenario, FAKE_BRIDGE_LOG: log },
    config(name, extra = {}) {
      const p = path.join(tmp, name);
      fs.writeFileSync(p, JSON.stringify({ bridge, chat: 'bench', steps: 4, ...extra }));
      return p;
    },
    remove: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}
