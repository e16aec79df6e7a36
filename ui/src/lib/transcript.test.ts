import { describe, expect, it } from 'vitest';
import type { TranscriptEvent } from './generated/conveyor';
import { tev } from '../test/fixtures';
import { atBottom, lastSeq, merge, rows, shortInput, stepTool } from './transcript';

const run: TranscriptEvent[] = [
  tev(1, 'thinking', { text: 'hmm' }),
  tev(2, 'text', { text: 'I will **look**' }),
  tev(3, 'tool_use', { tool: 'Bash', input: { command: 'ls -la\nrm x' } }),
  tev(4, 'tool_use', { tool: 'Read', input: { file_path: '/w/missing.txt' } }),
  tev(5, 'tool_result', { tool: 'Bash', output: 'a\nb' }),
  tev(6, 'tool_result', { tool: 'Read', output: 'no such file', is_error: true }),
  tev(7, 'tool_use', { tool: 'Write', input: { file_path: '/w/out.txt', content: 'x' } }),
];

describe('transcript rows', () => {
  it('joins each result to its call, marks errors, and leaves a call without one running', () => {
    const r = rows(run);
    expect(r.map((x) => x.kind)).toEqual(['thinking', 'text', 'tool', 'tool', 'tool']);
    const [, , bash, read, write] = r;
    expect(bash).toMatchObject({ tool: 'Bash', short: 'ls -la…', status: 'ok', output: 'a\nb' });
    expect(read).toMatchObject({ tool: 'Read', short: '/w/missing.txt', status: 'error' });
    expect(write).toMatchObject({ tool: 'Write', status: 'running', output: null });
  });

  it('keeps a cut output’s full size and shows a result with no call as an error', () => {
    const r = rows([tev(1, 'tool_result', { tool: 'Bash', output: 'orphan' })]);
    expect(r).toEqual([{ kind: 'error', seq: 1, text: 'orphan' }]);
    const cut = rows([
      tev(1, 'tool_use', { tool: 'Bash', input: { command: 'cat big' } }),
      tev(2, 'tool_result', { tool: 'Bash', output: 'start…end', output_bytes: 99999 }),
    ]);
    expect(cut[0]).toMatchObject({ outputBytes: 99999 });
  });

  it('pairs a result with its call by id, whatever the order the calls of one tool end in', () => {
    const r = rows([
      tev(1, 'tool_use', { tool: 'Bash', tool_use_id: 'a', input: { command: 'sleep 9' } }),
      tev(2, 'tool_use', { tool: 'Bash', tool_use_id: 'b', input: { command: 'false' } }),
      tev(3, 'tool_result', { tool: 'Bash', tool_use_id: 'b', output: 'exit 1', is_error: true }),
      tev(4, 'tool_result', { tool: 'Bash', tool_use_id: 'a', output: 'slept' }),
    ]);
    expect(r).toMatchObject([
      { short: 'sleep 9', status: 'ok', output: 'slept' },
      { short: 'false', status: 'error', output: 'exit 1' },
    ]);
  });

  it('merges pages by seq: a page asked twice or overlapping adds only what is new', () => {
    let events = merge([], run.slice(0, 3));
    events = merge(events, run.slice(0, 3));
    expect(events).toHaveLength(3);
    events = merge(events, run.slice(2));
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(lastSeq(events)).toBe(7);
    expect(lastSeq([])).toBe(0);
  });

  it('short forms: a path, a pattern, else the input; long lines cut', () => {
    expect(shortInput('Grep', { pattern: 'fn main' })).toBe('fn main');
    expect(shortInput('X', { a: 1 })).toBe('{"a":1}');
    expect(shortInput('Bash', { command: 'y'.repeat(200) })).toBe(`${'y'.repeat(120)}…`);
  });
});

describe('transcript view', () => {
  it('j and k go between tool calls only, and stay at the ends', () => {
    const r = rows(run);
    expect(stepTool(r, -1, 1)).toBe(2);
    expect(stepTool(r, 2, 1)).toBe(3);
    expect(stepTool(r, 4, 1)).toBe(4);
    expect(stepTool(r, 2, -1)).toBe(2);
    expect(stepTool(r, 4, -1)).toBe(3);
  });

  it('follows the bottom only when the reader is there', () => {
    expect(atBottom(900, 100, 1000)).toBe(true);
    expect(atBottom(880, 100, 1000)).toBe(true);
    expect(atBottom(500, 100, 1000)).toBe(false);
  });
});
