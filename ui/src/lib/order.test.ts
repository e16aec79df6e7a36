import { describe, expect, it } from 'vitest';
import { gapAt, inOrder, moveBy, moveByKey, moveTo, movesLine, orderKey } from './order';

const ids = ['a', 'b', 'c', 'd'];
const key = (k: string, over: Partial<Parameters<typeof orderKey>[0]> = {}) => ({
  key: k,
  code: '',
  altKey: true,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  ...over,
});

describe('the queue reordered', () => {
  it('moves a line into a gap: before the line at it, or after the last', () => {
    expect(moveTo(ids, 2, 0)).toEqual(['c', 'a', 'b', 'd']);
    expect(moveTo(ids, 0, 2)).toEqual(['b', 'a', 'c', 'd']);
    expect(moveTo(ids, 0, 4)).toEqual(['b', 'c', 'd', 'a']);
    expect(moveTo(ids, 3, 1)).toEqual(['a', 'd', 'b', 'c']);
    // Either side of the line itself: the same order, and no move to send.
    expect(moveTo(ids, 1, 1)).toEqual(ids);
    expect(moveTo(ids, 1, 2)).toEqual(ids);
    expect([movesLine(1, 1), movesLine(1, 2), movesLine(1, 0), movesLine(1, 3)]).toEqual([false, false, true, true]);
    // Out of range: clamped, or nothing moved.
    expect(moveTo(ids, 1, 99)).toEqual(['a', 'c', 'd', 'b']);
    expect(moveTo(ids, 7, 0)).toEqual(ids);
    expect(ids).toEqual(['a', 'b', 'c', 'd']);
  });

  it('finds the gap under the pointer by the rows\' middles', () => {
    const middles = [10, 30, 50];
    expect(gapAt(middles, 0)).toBe(0);
    expect(gapAt(middles, 9.9)).toBe(0);
    expect(gapAt(middles, 10)).toBe(1);
    expect(gapAt(middles, 45)).toBe(2);
    expect(gapAt(middles, 200)).toBe(3);
    expect(gapAt([], 5)).toBe(0);
  });

  it('moves the focused line with Alt+↑/↓ and Alt+Home/End, and nowhere past the ends', () => {
    expect(orderKey(key('ArrowUp'))).toBe(-1);
    expect(orderKey(key('ArrowDown'))).toBe(1);
    expect(orderKey(key('Home'))).toBe(-Infinity);
    expect(orderKey(key('End'))).toBe(Infinity);
    // Plain arrows scroll, and other modifiers are other shortcuts.
    expect(orderKey(key('ArrowUp', { altKey: false }))).toBeNull();
    expect(orderKey(key('ArrowUp', { shiftKey: true }))).toBeNull();
    expect(orderKey(key('ArrowUp', { ctrlKey: true }))).toBeNull();
    expect(orderKey(key('ArrowUp', { isComposing: true }))).toBeNull();
    expect(orderKey(key('j'))).toBeNull();

    expect(moveBy(ids, 'c', -1)).toEqual(['a', 'c', 'b', 'd']);
    expect(moveBy(ids, 'b', 1)).toEqual(['a', 'c', 'b', 'd']);
    expect(moveBy(ids, 'a', -1)).toBeNull();
    expect(moveBy(ids, 'd', 1)).toBeNull();
    expect(moveBy(ids, 'x', 1)).toBeNull();
    expect(moveByKey(ids, 'c', -Infinity)).toEqual(['c', 'a', 'b', 'd']);
    expect(moveByKey(ids, 'b', Infinity)).toEqual(['a', 'c', 'd', 'b']);
    expect(moveByKey(ids, 'a', -Infinity)).toBeNull();
    expect(moveByKey(ids, 'd', Infinity)).toBeNull();
    expect(moveByKey(ids, 'b', 1)).toEqual(['a', 'c', 'b', 'd']);
  });

  it('shows lines in a wanted order, the ones it does not name after them as they were', () => {
    const lines = ['a', 'b', 'c', 'd'].map((id) => ({ id }));
    expect(inOrder(lines, ['c', 'a']).map((l) => l.id)).toEqual(['c', 'a', 'b', 'd']);
    expect(inOrder(lines, null).map((l) => l.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});
