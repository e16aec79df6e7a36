// A run's conversation as the Lines page shows it: the daemon's transcript events (pages read
// after each `run_event`) folded into rows — a tool call and its result one row — and the
// small decisions of the view (a call's short form, where `j`/`k` go, whether to follow the
// bottom). Pure: the component renders and scrolls. The command that continues the session
// is the daemon's (`Run.resume`): it knows the agent's user and home.

import type { TranscriptEvent } from './generated/conveyor';

export type Row =
  | { kind: 'text' | 'thinking'; seq: number; text: string }
  | {
      kind: 'tool';
      seq: number;
      tool: string;
      /** One line saying what the call does (a command, a file). */
      short: string;
      input: unknown;
      /** `running` until its result has come. */
      status: 'running' | 'ok' | 'error';
      output: string | null;
      /** The output's full size when the daemon cut it. */
      outputBytes: number | null;
    }
  | { kind: 'result'; seq: number; text: string; isError: boolean }
  | { kind: 'error'; seq: number; text: string };

/** `events` with the page's events after the last one it has (a page asked twice adds nothing). */
export function merge(events: TranscriptEvent[], page: TranscriptEvent[]): TranscriptEvent[] {
  const last = events.length ? events[events.length - 1].seq : 0;
  const fresh = page.filter((e) => e.seq > last);
  return fresh.length ? [...events, ...fresh] : events;
}

/** The `after=` to ask next. */
export const lastSeq = (events: TranscriptEvent[]): number =>
  events.length ? events[events.length - 1].seq : 0;

const SHORT = 120;

/** A tool call in one line: a Bash command's first line, a file tool's path, else its input. */
export function shortInput(tool: string, input: unknown): string {
  const o = (input ?? {}) as Record<string, unknown>;
  const pick =
    typeof o.command === 'string'
      ? o.command
      : typeof o.file_path === 'string'
        ? o.file_path
        : typeof o.pattern === 'string'
          ? o.pattern
          : typeof o.url === 'string'
            ? o.url
            : JSON.stringify(input ?? null);
  const line = pick.split('\n')[0];
  const more = line.length > SHORT || line !== pick;
  return more ? `${line.slice(0, SHORT)}…` : line;
}

/** The events as rows: each result joins the call it answers (by the call's id; by its tool,
 * the earliest still waiting, when the stream gave no id). A result with no call is an error
 * row of its own. */
export function rows(events: TranscriptEvent[]): Row[] {
  const out: Row[] = [];
  const waiting: number[] = [];
  const byId = new Map<string, number>();
  for (const e of events) {
    switch (e.kind) {
      case 'text':
      case 'thinking':
        out.push({ kind: e.kind, seq: e.seq, text: e.text ?? '' });
        break;
      case 'tool_use': {
        const tool = e.tool ?? '?';
        if (e.tool_use_id) byId.set(e.tool_use_id, out.length);
        waiting.push(out.length);
        out.push({
          kind: 'tool',
          seq: e.seq,
          tool,
          short: shortInput(tool, e.input),
          input: e.input,
          status: 'running',
          output: null,
          outputBytes: null,
        });
        break;
      }
      case 'tool_result': {
        const i = e.tool_use_id ? byId.get(e.tool_use_id) : undefined;
        const at =
          i !== undefined
            ? waiting.indexOf(i)
            : waiting.findIndex((w) => {
                const r = out[w];
                return r.kind === 'tool' && (e.tool == null || r.tool === e.tool);
              });
        if (at < 0) {
          out.push({ kind: 'error', seq: e.seq, text: e.output ?? '' });
          break;
        }
        const r = out[waiting[at]];
        waiting.splice(at, 1);
        if (r.kind === 'tool') {
          r.status = e.is_error ? 'error' : 'ok';
          r.output = e.output ?? '';
          r.outputBytes = e.output_bytes ?? null;
        }
        break;
      }
      case 'result':
        out.push({ kind: 'result', seq: e.seq, text: e.text ?? '', isError: e.is_error });
        break;
      case 'error':
        out.push({ kind: 'error', seq: e.seq, text: e.text ?? '' });
        break;
    }
  }
  return out;
}

/** The index of the next (`dir` 1, `j`) or previous (-1, `k`) tool row from `from` (-1: none
 * chosen yet); `from` itself when there is none that way. */
export function stepTool(list: Row[], from: number, dir: 1 | -1): number {
  for (let i = from + dir; i >= 0 && i < list.length; i += dir) {
    if (list[i].kind === 'tool') return i;
  }
  return from;
}

/** Whether the reader is at the bottom (within `slack` px): only then do new rows scroll it. */
export const atBottom = (
  scrollTop: number,
  clientHeight: number,
  scrollHeight: number,
  slack = 24,
): boolean => scrollHeight - scrollTop - clientHeight <= slack;
