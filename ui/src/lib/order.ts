// The queue's order on the Lines page: where a dragged line lands, what Alt+↑/↓ does, and the
// order shown while the daemon takes a new one. Pure: the page does the pointer events and the
// one `PUT /api/lines/order` (through ipc). The daemon decides the priorities; the page only
// says the order.
import type { KeyLike } from './keys';

/**
 * The ids with the one at `from` moved into gap `gap`: gap `i` is just before the line now at
 * `i`, gap `ids.length` after the last. The same order when the gap is either side of the line.
 */
export function moveTo(ids: readonly string[], from: number, gap: number): string[] {
  const out = [...ids];
  if (from < 0 || from >= ids.length) return out;
  const to = Math.max(0, Math.min(ids.length, gap));
  const [moved] = out.splice(from, 1);
  out.splice(to > from ? to - 1 : to, 0, moved);
  return out;
}

/** Whether dropping the line at `from` into gap `gap` changes the order. */
export function movesLine(from: number, gap: number): boolean {
  return from >= 0 && gap !== from && gap !== from + 1;
}

/**
 * The gap a pointer at height `y` is over, given each row's vertical middle in the list's
 * order: before the first row whose middle is below the pointer.
 */
export function gapAt(middles: readonly number[], y: number): number {
  const i = middles.findIndex((m) => y < m);
  return i < 0 ? middles.length : i;
}

/** The ids with `id` moved by `delta` places (−1 up, +1 down); null when it cannot move. */
export function moveBy(ids: readonly string[], id: string, delta: number): string[] | null {
  const from = ids.indexOf(id);
  const to = from + delta;
  if (from < 0 || delta === 0 || to < 0 || to >= ids.length) return null;
  return moveTo(ids, from, delta > 0 ? to + 1 : to);
}

/** A key that moves the focused queued line: Alt+↑ one up, Alt+↓ one down (−1, +1); Alt+Home
 * to the top and Alt+End to the bottom (−∞, +∞). Null for any other key. */
export function orderKey(e: KeyLike): number | null {
  if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return null;
  switch (e.key) {
    case 'ArrowUp':
      return -1;
    case 'ArrowDown':
      return 1;
    case 'Home':
      return -Infinity;
    case 'End':
      return Infinity;
    default:
      return null;
  }
}

/** `moveBy` that takes ±∞ to the top or the bottom. */
export function moveByKey(ids: readonly string[], id: string, delta: number): string[] | null {
  const from = ids.indexOf(id);
  if (from < 0) return null;
  if (delta === -Infinity) return from === 0 ? null : moveTo(ids, from, 0);
  if (delta === Infinity) return from === ids.length - 1 ? null : moveTo(ids, from, ids.length);
  return moveBy(ids, id, delta);
}

/**
 * `lines` sorted by a wanted order of ids (the order just asked of the daemon, shown until it
 * answers); ids not in it keep their place after the listed ones, in their own order.
 */
export function inOrder<T extends { id: string }>(lines: readonly T[], order: readonly string[] | null): T[] {
  if (!order) return [...lines];
  const rank = new Map(order.map((id, i) => [id, i]));
  const at = (l: T) => rank.get(l.id) ?? order.length;
  return lines.map((l, i) => ({ l, i })).sort((a, b) => at(a.l) - at(b.l) || a.i - b.i).map(({ l }) => l);
}
