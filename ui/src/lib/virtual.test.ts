import { describe, expect, it } from 'vitest';
import { Heights, windowOf } from './virtual';

describe('a long list’s window', () => {
  it('renders only the rows in view and a margin, at any length', () => {
    const h = new Heights(20);
    h.resize(5000);
    expect(h.total()).toBe(100_000);
    const w = windowOf(h, 50_000, 600, 100);
    // Rows 2495 (49 900 px) to 2535 (50 700 px), and not one more.
    expect(w).toEqual({ start: 2495, end: 2536, top: 49_900, height: 100_000 });
  });

  it('a measured row moves the rows after it and the total', () => {
    const h = new Heights(20);
    h.resize(10);
    expect(h.offset(5)).toBe(100);
    h.set(2, 120);
    expect(h.offset(5)).toBe(200);
    expect(h.total()).toBe(300);
    expect(h.at(139)).toBe(2);
    expect(h.at(160)).toBe(3);
    expect(h.set(2, 120)).toBe(false);
  });

  it('starts at the top, ends at the last row, and an empty list is empty', () => {
    const h = new Heights(30);
    expect(windowOf(h, 0, 500)).toEqual({ start: 0, end: 0, top: 0, height: 0 });
    h.resize(3);
    expect(windowOf(h, 0, 500)).toEqual({ start: 0, end: 3, top: 0, height: 90 });
    expect(windowOf(h, 10_000, 500).end).toBe(3);
    h.resize(2);
    expect(h.total()).toBe(60);
  });
});
