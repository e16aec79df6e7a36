import { cleanup, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { i18n } from '../lib/i18n/index.svelte';
import type { ProposedView } from '../lib/ipc';
import ProposedFile from './ProposedFile.svelte';
import StepLog from './StepLog.svelte';

const file = (over: Partial<ProposedView> = {}): ProposedView => ({
  path: 'src/a.js',
  truncated: false,
  exists: true,
  changed_on_disk: false,
  refused: null,
  hunks: [{ lines: [{ tag: '-', old: 1, new: null, text: 'old' }, { tag: '+', old: null, new: 1, text: 'new' }] }],
  written: null,
  ...over,
});

afterEach(() => cleanup());

describe('StepLog', () => {
  it('prints one line per event in the chosen language', () => {
    i18n.lang = 'ru';
    render(StepLog, {
      log: [
        { kind: 'event', event: { event: 'step_started', n: 1, new: false, sent_chars: 1200 } },
        { kind: 'event', event: { event: 'request_executed', n: 1, kind: 'FIND', arg: 'waitForAnswer', hits: 3, truncated: true, unchanged: 0, changed: 0 } },
        { kind: 'event', event: { event: 'finished', stop_reason: 'no_requests', steps: 3 } },
      ],
    });
    const lines = screen.getAllByTestId('step-line').map((l) => l.textContent);
    expect(lines[0]).toContain('Шаг 1');
    expect(lines[1]).toContain('FIND waitForAnswer — найдено: 3 [обрезано]');
    expect(lines[2]).toContain('модель ответила без запросов');
  });

  it('says which NEEDed files changed since sent and which were not sent again', () => {
    const need = { event: 'request_executed', n: 3, kind: 'NEED', arg: 'a.rs b.rs c.rs', hits: 1, truncated: false } as const;
    for (const [lang, changed, unchanged] of [
      ['ru', 'изменились с отправки: 1', 'не изменились, не отправлены повторно: 2'],
      ['en', 'changed since sent: 1', 'unchanged, not sent again: 2'],
    ] as const) {
      i18n.lang = lang;
      render(StepLog, {
        log: [
          { kind: 'event', event: { ...need, unchanged: 2, changed: 1 } },
          { kind: 'event', event: { ...need, hits: 3, unchanged: 0, changed: 0 } },
        ],
      });
      const lines = screen.getAllByTestId('step-line').map((l) => l.textContent ?? '');
      expect(lines[0]).toContain(`[${changed}] [${unchanged}]`);
      expect(lines[1]).not.toContain('[');
      cleanup();
    }
    i18n.lang = 'ru';
  });

  it('speaks English when asked', () => {
    i18n.lang = 'en';
    render(StepLog, { log: [{ kind: 'event', event: { event: 'finished', stop_reason: 'loop', steps: 2 } }] });
    expect(screen.getByTestId('step-line').textContent).toBe('Done: the model repeated its requests, steps: 2');
    i18n.lang = 'ru';
  });
});

describe('ProposedFile', () => {
  it('shows the diff and a Write button', () => {
    render(ProposedFile, { file: file(), state: undefined, onWrite: () => {} });
    expect(screen.getByTestId('write').textContent?.trim()).toBe('Записать');
    expect(document.querySelector('tr.add')?.textContent).toContain('new');
    expect(document.querySelector('tr.del')?.textContent).toContain('old');
  });

  it('a truncated file has no Write button and says why', () => {
    render(ProposedFile, { file: file({ truncated: true }), state: undefined, onWrite: () => {} });
    expect(screen.queryByTestId('write')).toBeNull();
    expect(screen.getByTestId('truncated')).toBeTruthy();
  });

  it('a file changed on disk is flagged and the button asks to overwrite', () => {
    let forced: boolean | null = null;
    render(ProposedFile, { file: file({ changed_on_disk: true }), state: undefined, onWrite: (f: boolean) => (forced = f) });
    expect(screen.getByTestId('changed')).toBeTruthy();
    screen.getByTestId('write').click();
    expect(forced).toBe(true);
  });

  it('shows the result and the backup path after a write', () => {
    render(ProposedFile, {
      file: file(),
      state: { kind: 'done', outcome: { kind: 'written', record: { path: 'src/a.js', backup: 'backup/20261129-101500/src/a.js', written_at: 'x' } } },
      onWrite: () => {},
    });
    expect(screen.getByTestId('write-result').textContent).toContain('backup/20261129-101500/src/a.js');
  });
});
