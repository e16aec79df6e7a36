// A run's conversation against the mocked IPC: its rows, a tool call unfolded, `j`/`k`/`o`,
// new events read only when a `run_event` says there are some, the bottom followed, the resume
// command copied, and a run of 5,000 events rendered as a window of rows, not 5,000.
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { conveyorMock } from '../test/conveyor-ipc';
import { run, tev } from '../test/fixtures';
import { flush } from '../test/flush';
import type { Transcript, TranscriptEvent } from '../lib/generated/conveyor';

vi.mock('../lib/ipc', async (orig) => (await import('../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../lib/ipc'));
const { ConveyorStore } = await import('../lib/stores/conveyor.svelte');
const { i18n } = await import('../lib/i18n/index.svelte');
const RunConversation = (await import('./RunConversation.svelte')).default;

const page = (events: TranscriptEvent[], done = false): Transcript => ({
  events,
  done,
  tokens: { input: 1200, output: 340, cache_read: 5000, cache_write: 0 },
  cost_usd: 0.0421,
});

const first = [
  tev(1, 'thinking', { text: 'look first' }),
  tev(2, 'text', { text: 'I will **check** the tree.' }),
  tev(3, 'tool_use', { tool: 'Bash', tool_use_id: 'a', input: { command: 'ls -la' } }),
  tev(4, 'tool_result', { tool: 'Bash', tool_use_id: 'a', output: 'README.md' }),
  tev(5, 'tool_use', { tool: 'Read', tool_use_id: 'b', input: { file_path: '/w/missing.txt' } }),
  tev(6, 'tool_result', { tool: 'Read', tool_use_id: 'b', output: 'File does not exist.', is_error: true }),
];

beforeAll(() => {
  // jsdom has no layout: no ResizeObserver, and every height 0 (the estimate stands).
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
});

beforeEach(() => {
  vi.clearAllMocks();
  i18n.lang = 'ru';
});
afterEach(() => cleanup());

const rowsShown = () => screen.getAllByTestId('run-row').map((r) => r.dataset.kind);

describe('a run’s conversation', () => {
  it('shows text, folded thinking and one row per call with its status; a call unfolds to its input and result', async () => {
    api.transcript.mockResolvedValueOnce(page(first));
    render(RunConversation, { store: new ConveyorStore(), run: run() });
    await flush();
    expect(api.transcript).toHaveBeenCalledWith(7, 0);
    expect(rowsShown()).toEqual(['thinking', 'text', 'tool', 'tool']);
    expect(screen.getByText('check').tagName).toBe('STRONG');
    const [bash, read] = screen.getAllByTestId('run-tool');
    expect([bash.dataset.status, read.dataset.status]).toEqual(['ok', 'error']);
    expect(read.textContent).toContain('/w/missing.txt');
    expect(read.textContent).toContain('ошибка');
    expect(screen.getByTestId('run-tokens').textContent).toContain('1');
    expect(screen.getByTestId('run-cost').textContent).toBe('Потрачено: $0.04');
    expect(screen.getByTestId('run-live')).toBeTruthy();
    expect(screen.queryByTestId('run-tool-io')).toBeNull();
    await fireEvent.click(read);
    expect(screen.getByTestId('run-tool-input').textContent).toContain('"file_path": "/w/missing.txt"');
    expect(screen.getByTestId('run-tool-output').textContent).toBe('File does not exist.');
    expect(read.getAttribute('aria-expanded')).toBe('true');
  });

  it('j and k move between tool calls, o unfolds the one chosen, on either keyboard layout', async () => {
    api.transcript.mockResolvedValueOnce(page(first));
    render(RunConversation, { store: new ConveyorStore(), run: run() });
    await flush();
    const log = screen.getByTestId('run-scroller');
    const current = () => document.querySelector<HTMLElement>('.row.current')?.dataset.index;
    await fireEvent.keyDown(log, { key: 'j', code: 'KeyJ' });
    expect(current()).toBe('2');
    await fireEvent.keyDown(log, { key: 'о', code: 'KeyJ' });
    expect(current()).toBe('3');
    await fireEvent.keyDown(log, { key: 'j', code: 'KeyJ' });
    expect(current()).toBe('3');
    await fireEvent.keyDown(log, { key: 'k', code: 'KeyK' });
    expect(current()).toBe('2');
    await fireEvent.keyDown(log, { key: 'o', code: 'KeyO' });
    expect(screen.getByTestId('run-tool-input').textContent).toContain('ls -la');
    await fireEvent.keyDown(log, { key: 'o', code: 'KeyO' });
    expect(screen.queryByTestId('run-tool-io')).toBeNull();
  });

  it('reads more only when a run_event says there is more, from where it is, until the run is done', async () => {
    const store = new ConveyorStore();
    api.transcript.mockResolvedValueOnce(page(first.slice(0, 3)));
    const view = render(RunConversation, { store, run: run() });
    await flush();
    expect(api.transcript).toHaveBeenCalledTimes(1);
    expect(screen.getAllByTestId('run-tool')[0].dataset.status).toBe('running');
    // An event for another run, or for what is already here: nothing is asked.
    store.runSeq[99] = 40;
    store.runSeq[7] = 3;
    await flush();
    expect(api.transcript).toHaveBeenCalledTimes(1);
    api.transcript.mockResolvedValueOnce(page(first.slice(3)));
    store.runSeq[7] = 6;
    await flush();
    expect(api.transcript).toHaveBeenLastCalledWith(7, 3);
    expect(screen.getAllByTestId('run-tool').map((t) => t.dataset.status)).toEqual(['ok', 'error']);
    // The run's row says it ended: its last page, then nothing more.
    api.transcript.mockResolvedValueOnce(page([tev(7, 'result', { text: 'done' })], true));
    await view.rerender({ store, run: run({ outcome: 'ok', cost_usd: 0.05 }) });
    await flush();
    expect(api.transcript).toHaveBeenLastCalledWith(7, 6);
    expect(screen.queryByTestId('run-live')).toBeNull();
    expect(rowsShown().at(-1)).toBe('result');
    store.runSeq[7] = 8;
    await flush();
    expect(api.transcript).toHaveBeenCalledTimes(3);
  });

  it('copies the command that resumes the session', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    api.transcript.mockResolvedValueOnce(page(first, true));
    render(RunConversation, { store: new ConveyorStore(), run: run({ outcome: 'ok' }) });
    await flush();
    const resume = 'cd /srv/conveyor/worktrees/l1 && HOME=/var/lib/agent claude --resume sess-1';
    expect(screen.getByTestId('run-resume').textContent).toBe(resume);
    await fireEvent.click(screen.getByTestId('run-copy'));
    await flush();
    expect(writeText).toHaveBeenCalledWith(resume);
    expect(screen.getByTestId('run-copy').textContent?.trim()).toBe('Скопировано');
  });

  it('a run of 5,000 events renders a window of rows, and follows the bottom while running', async () => {
    const many: TranscriptEvent[] = [];
    for (let n = 1; many.length < 5000; n++) {
      const id = `t${n}`;
      many.push(tev(many.length + 1, 'tool_use', { tool: 'Bash', tool_use_id: id, input: { command: `echo ${n}` } }));
      many.push(tev(many.length + 1, 'tool_result', { tool: 'Bash', tool_use_id: id, output: `${n}` }));
    }
    api.transcript.mockResolvedValueOnce(page(many));
    render(RunConversation, { store: new ConveyorStore(), run: run() });
    await flush();
    expect(screen.getByTestId('run-count').dataset.n).toBe('5000');
    const shown = screen.getAllByTestId('run-row');
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(100);
    // A running run opens at its bottom: the last call is among the rows rendered.
    expect(shown.at(-1)?.dataset.index).toBe('2499');
    expect(shown.at(-1)?.textContent).toContain('echo 2500');
  });
});
