import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunUpdate, RunView, TreeEntry } from '../ipc';

const api = vi.hoisted(() => ({
  open: vi.fn(),
  list: vi.fn(),
  selectionSize: vi.fn(),
  start: vi.fn(),
  stop: vi.fn(),
  write: vi.fn(),
  runs: vi.fn(),
  run: vi.fn(),
}));

vi.mock('../ipc', async (orig) => {
  const real = await orig<typeof import('../ipc')>();
  return {
    IpcError: real.IpcError,
    folder: { open: api.open, list: api.list, selectionSize: api.selectionSize },
    deepwork: { start: api.start, stop: api.stop, write: api.write, runs: api.runs, run: api.run },
  };
});

const { DeepworkStore } = await import('./deepwork.svelte');
const { IpcError } = await import('../ipc');

const entry = (path: string, dir = false, files = 0): TreeEntry => ({
  name: path.split('/').pop()!,
  path,
  dir,
  files,
});

const runView = (id: number): RunView => ({
  summary: { id, folder: '/p', question: 'q', started_at: '2026-11-29T10:00:00Z', stop_reason: 'no_requests', steps: 1, error: null },
  files: [],
  steps: [],
  answer: 'It is `waitForAnswer`.',
  prose: 'It is `waitForAnswer`.',
  proposed: [],
  writes: [],
});

describe('DeepworkStore', () => {
  beforeEach(() => {
    vi.resetAllMocks();
    api.open.mockResolvedValue({ root: '/p', name: 'p', files: 3, watching: true });
    api.list.mockImplementation(async (dir: string) =>
      dir === '' ? [entry('src', true, 2), entry('README.md')] : [entry('src/a.rs'), entry('src/b.rs')],
    );
    api.selectionSize.mockResolvedValue({ chars: 42, files: 1, skipped: [] });
    api.runs.mockResolvedValue([]);
  });

  it('opens a folder and expands folders lazily into flat rows', async () => {
    const s = new DeepworkStore();
    await s.openFolder('/p');
    expect(s.rows.map((r) => r.entry.path)).toEqual(['src', 'README.md']);
    expect(api.list).toHaveBeenCalledTimes(1);
    await s.toggle('src');
    expect(s.rows.map((r) => [r.entry.path, r.depth])).toEqual([
      ['src', 0],
      ['src/a.rs', 1],
      ['src/b.rs', 1],
      ['README.md', 0],
    ]);
    await s.toggle('src');
    expect(s.rows).toHaveLength(2);
    await s.toggle('src');
    expect(api.list).toHaveBeenCalledTimes(2); // the second expand reuses the loaded children
  });

  it('measures the ticked files and sends them with the question', async () => {
    const s = new DeepworkStore();
    await s.openFolder('/p');
    s.tick('src/b.rs', true);
    s.tick('README.md', true);
    s.tick('README.md', false);
    await vi.waitFor(() => expect(s.selection?.chars).toBe(42));
    expect(api.selectionSize).toHaveBeenLastCalledWith(['src/b.rs']);
    api.start.mockResolvedValue(7);
    s.question = 'where?';
    await s.ask();
    expect(api.start).toHaveBeenCalledWith({ question: 'where?', files: ['src/b.rs'] }, expect.any(Function));
    expect(s.running).toBe(true);
  });

  it('fills the log from channel updates and ends with the run', async () => {
    const s = new DeepworkStore();
    let send: (u: RunUpdate) => void = () => {};
    api.start.mockImplementation(async (_req: unknown, on: (u: RunUpdate) => void) => {
      send = on;
      return 3;
    });
    s.question = 'q';
    await s.ask();
    send({ kind: 'event', event: { event: 'step_started', n: 1, new: false, sent_chars: 900 } });
    send({ kind: 'event', event: { event: 'request_executed', n: 1, kind: 'FIND', arg: 'x', hits: 2, truncated: false, unchanged: 0, changed: 0 } });
    expect(s.log).toHaveLength(2);
    expect(s.running).toBe(true);
    send({ kind: 'done', run: runView(3) });
    expect(s.running).toBe(false);
    expect(s.run?.answer).toContain('waitForAnswer');
  });

  it('a failed run keeps its log and shows the error code', async () => {
    const s = new DeepworkStore();
    let send: (u: RunUpdate) => void = () => {};
    api.start.mockImplementation(async (_r: unknown, on: (u: RunUpdate) => void) => ((send = on), 1));
    s.question = 'q';
    await s.ask();
    send({ kind: 'failed', error: { code: 'transport', message: 'bridge failed with exit status: 3', field: null, daemon_code: null } });
    expect(s.error?.code).toBe('transport');
    expect(s.log.at(-1)).toEqual({ kind: 'failed', message: 'bridge failed with exit status: 3' });
    expect(s.running).toBe(false);
  });

  it('a write that finds the file changed on disk is reported, not written', async () => {
    const s = new DeepworkStore();
    s.run = runView(5);
    api.write.mockResolvedValue({ kind: 'changed_on_disk', path: 'a.js' });
    await s.write('a.js');
    expect(api.write).toHaveBeenCalledWith(5, 'a.js', false);
    expect(s.writes['a.js']).toEqual({ kind: 'done', outcome: { kind: 'changed_on_disk', path: 'a.js' } });
    expect(api.run).not.toHaveBeenCalled();
  });

  it('reopens a past run from the history with its question', async () => {
    const s = new DeepworkStore();
    s.log = [{ kind: 'failed', message: 'old' }];
    api.run.mockResolvedValue({ ...runView(9), summary: { ...runView(9).summary, question: 'earlier?' } });
    await s.reopen(9);
    expect(api.run).toHaveBeenCalledWith(9);
    expect(s.run?.summary.id).toBe(9);
    expect(s.question).toBe('earlier?');
    expect(s.log).toEqual([]);
  });

  it('errors from opening a folder keep their code', async () => {
    const s = new DeepworkStore();
    api.open.mockRejectedValue(new IpcError('folder_unavailable', 'cannot open /x', null));
    await s.openFolder('/x');
    expect(s.error?.code).toBe('folder_unavailable');
    expect(s.folder).toBeNull();
  });
});
