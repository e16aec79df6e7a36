// What the never-autonomous guard stopped, as the Lines page words it: the action a denied
// tool call would have taken (a Bash command, the file a Write or Edit would have touched,
// the call's input otherwise). Pure: the page and its tests call it with the daemon's values.
import type { Denial } from './generated/conveyor';

/** The longest action shown in full; a longer one is cut with an ellipsis (its whole text
 * stays in the element's title). */
export const ACTION_MAX = 200;

/** The input's string field `key`, when the (untyped) input has one. */
function field(input: unknown, key: string): string | null {
  if (typeof input !== 'object' || input === null) return null;
  const v = (input as Record<string, unknown>)[key];
  return typeof v === 'string' && v.trim() ? v : null;
}

/** What the denied call would have done: a Bash `command`, a `file_path` (Write, Edit, …), a
 * `url`, else the input as compact JSON (a string input as itself). */
export function denialAction(d: Pick<Denial, 'tool_name' | 'input'>): string {
  const named = field(d.input, 'command') ?? field(d.input, 'file_path') ?? field(d.input, 'url');
  if (named) return named.trim();
  if (typeof d.input === 'string') return d.input;
  if (d.input === undefined || d.input === null) return '';
  return JSON.stringify(d.input);
}

/** `s` cut to `max` characters, an ellipsis marking the cut. */
export function clip(s: string, max = ACTION_MAX): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
