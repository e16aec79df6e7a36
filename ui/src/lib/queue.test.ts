import { describe, expect, it } from 'vitest';
import { IpcError } from './ipc';
import { afterSending, blankDraft, isBlank, readyToSend, sendInOrder, toNewLine, type Draft } from './queue';
import { line } from '../test/fixtures';
import type { NewLine } from './generated/conveyor';

const draft = (key: number, title: string, task = 'do it', planfixTask = ''): Draft => ({ key, title, task, planfixTask });
const asError = (e: unknown) => (e instanceof IpcError ? e : new IpcError('internal', String(e), null));

describe('several lines at once', () => {
  it('may be sent once some row is filled and every filled row has a title', () => {
    expect(readyToSend([blankDraft(0)])).toBe(false);
    expect(readyToSend([draft(0, 'a'), blankDraft(1)])).toBe(true);
    expect(readyToSend([draft(0, 'a'), draft(1, '  ', 'a task without a title')])).toBe(false);
    expect(isBlank(draft(0, ' ', ' ', ' '))).toBe(true);
    expect(isBlank(draft(0, '', '', '#12'))).toBe(false);
  });

  it('each row is a request with the form\'s project and priority', () => {
    expect(toNewLine(draft(0, ' Login ', 'Add it', ' #12 '), 'p1', 3.7)).toEqual({
      project_id: 'p1',
      title: 'Login',
      task: 'Add it',
      priority: 3,
      planfix_task: '#12',
    });
    expect(toNewLine(draft(0, 'a'), 'p1', null)).toEqual({ project_id: 'p1', title: 'a', task: 'do it' });
  });

  it('are sent one by one in order, a refusal not stopping the rest, blank rows left out', async () => {
    const sent: string[] = [];
    let inFlight = 0;
    const send = async (l: NewLine) => {
      inFlight += 1;
      expect(inFlight).toBe(1);
      await new Promise((r) => setTimeout(r, 1));
      inFlight -= 1;
      sent.push(l.title);
      if (l.title === 'twice') {
        throw new IpcError('daemon', 'the project already has an open line titled "twice"', 'title', 'duplicate_title');
      }
      return line(l.title, 'queued');
    };
    const drafts = [draft(0, 'one'), blankDraft(1), draft(2, 'twice'), draft(3, 'three')];
    const outcomes = await sendInOrder(drafts, (d) => toNewLine(d, 'p', 0), send, asError);
    expect(sent).toEqual(['one', 'twice', 'three']);
    expect(outcomes.map((o) => [o.draft.key, o.line?.id ?? null, o.error?.daemonCode ?? null])).toEqual([
      [0, 'one', null],
      [2, null, 'duplicate_title'],
      [3, 'three', null],
    ]);

    // The form keeps the refused row with its reason, and drops the blank and the sent ones.
    const after = afterSending(drafts, outcomes);
    expect(after.drafts.map((d) => d.title)).toEqual(['twice']);
    expect(after.errors[2].field).toBe('title');
    expect(Object.keys(after.errors)).toEqual(['2']);
  });

  it('leaves its first row, emptied, when every row went in', async () => {
    const drafts = [draft(5, 'a'), draft(6, 'b')];
    const outcomes = await sendInOrder(drafts, (d) => toNewLine(d, 'p', 0), async (l) => line(l.title, 'queued'), asError);
    expect(afterSending(drafts, outcomes)).toEqual({ drafts: [blankDraft(5)], errors: {} });
  });
});
