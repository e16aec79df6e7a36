// Several lines queued at once from the Lines page's form: one row per line, sent one by one
// in the rows' order (so that, of equal priority, they start in it), a refused row kept with
// its reason while the others go in. Pure but for the `send` it is given.
import type { IpcError } from './ipc';
import type { Line, NewLine } from './generated/conveyor';

/** One row of the form. `key` tells rows apart while they are added and removed. */
export interface Draft {
  key: number;
  title: string;
  task: string;
  planfixTask: string;
}

export function blankDraft(key: number): Draft {
  return { key, title: '', task: '', planfixTask: '' };
}

/** A row with nothing typed in it: left out, never sent. */
export function isBlank(d: Draft): boolean {
  return !d.title.trim() && !d.task.trim() && !d.planfixTask.trim();
}

/** Whether the form may be sent: some row is filled, and every filled row has a title. */
export function readyToSend(drafts: readonly Draft[]): boolean {
  const filled = drafts.filter((d) => !isBlank(d));
  return filled.length > 0 && filled.every((d) => d.title.trim() !== '');
}

/** The request for one row: the form's project and priority (a whole number, when given), the
 * PlanFix task only when one is typed. */
export function toNewLine(d: Draft, projectId: string, priority: number | null): NewLine {
  return {
    project_id: projectId,
    title: d.title.trim(),
    task: d.task,
    ...(typeof priority === 'number' && Number.isFinite(priority) ? { priority: Math.trunc(priority) } : {}),
    ...(d.planfixTask.trim() ? { planfix_task: d.planfixTask.trim() } : {}),
  };
}

/** What became of one row. */
export type Outcome = { draft: Draft; line: Line; error: null } | { draft: Draft; line: null; error: IpcError };

/**
 * Sends the filled rows one by one, in order, each only after the one before was answered; a
 * refusal does not stop the rest. Every filled row's outcome, in order.
 */
export async function sendInOrder(
  drafts: readonly Draft[],
  toLine: (d: Draft) => NewLine,
  send: (l: NewLine) => Promise<Line>,
  asError: (e: unknown) => IpcError,
): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const draft of drafts) {
    if (isBlank(draft)) continue;
    try {
      out.push({ draft, line: await send(toLine(draft)), error: null });
    } catch (e) {
      out.push({ draft, line: null, error: asError(e) });
    }
  }
  return out;
}

/** The form's rows once `outcomes` are in: the rows that went in and the blank ones are gone,
 * the rest stay in order (the refused ones with their reasons, by key); when none stays, the
 * first row again, emptied, so the form stays where it was. */
export function afterSending(
  drafts: readonly Draft[],
  outcomes: readonly Outcome[],
): { drafts: Draft[]; errors: Record<number, IpcError> } {
  const added = new Set(outcomes.filter((o) => o.line !== null).map((o) => o.draft.key));
  const errors: Record<number, IpcError> = {};
  for (const o of outcomes) if (o.error) errors[o.draft.key] = o.error;
  const kept = drafts.filter((d) => !added.has(d.key) && !isBlank(d));
  return { drafts: kept.length > 0 ? kept : [blankDraft(drafts[0]?.key ?? 0)], errors };
}
