// Starts tauri-driver (which starts WebKitWebDriver and the app) on a free display, and gives
// each test a WebDriver session on the built pult binary with an isolated home.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebDriver } from './webdriver.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
export const APP = process.env.PULT_APP ?? path.join(TARGET, 'debug', 'pult');

/** A port free on loopback now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForPort(port, child, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`tauri-driver did not listen on ${port}`);
}

/** Kills running instances of `exe` whose environment carries `HOME=home`. */
function killApp(exe, home) {
  if (!home) return;
  const real = fs.realpathSync(exe);
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/exe`) !== real) continue;
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`HOME=${home}`)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

/** A temp home with XDG folders; returns their paths. */
export function makeHome(name) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `pult-e2e-${name}-`));
  const dirs = { home, config: path.join(home, 'config'), data: path.join(home, 'data') };
  fs.mkdirSync(dirs.config, { recursive: true });
  fs.mkdirSync(dirs.data, { recursive: true });
  return dirs;
}

/**
 * Starts tauri-driver with `env` (the app inherits it) and opens a session on the app with
 * `args`. Returns { driver, stop }.
 */
export async function launch({ env, args = [], appPath = APP }) {
  if (!fs.existsSync(appPath)) throw new Error(`the app is not built: ${appPath}`);
  const port = await freePort();
  const nativePort = await freePort();
  const child = spawn('tauri-driver', ['--port', String(port), '--native-port', String(nativePort)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  try {
    // tauri-driver listens first, then starts WebKitWebDriver on the native port: wait for both.
    await waitForPort(port, child);
    await waitForPort(nativePort, child);
    const driver = await WebDriver.connect(`http://127.0.0.1:${port}`, {
      browserName: 'wry',
      'tauri:options': { application: appPath, args },
    });
    const stop = async () => {
      await driver.quit();
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      // Ending the session should close the app; if it did not, the app would keep the
      // driver's output pipes (and this process) alive. Stop our own instance: the one whose
      // environment has this launch's HOME.
      killApp(appPath, env.HOME);
      child.stdout.destroy();
      child.stderr.destroy();
    };
    return { driver, stop, log: () => log };
  } catch (e) {
    child.kill('SIGTERM');
    throw new Error(`${e.message}\n--- tauri-driver log ---\n${log}`);
  }
}

export async function screenshot(driver, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, `${name}.png`), await driver.screenshot());
}
