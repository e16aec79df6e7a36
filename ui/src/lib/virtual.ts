// A long list's window: which rows to render for a scroll position, given each row's height
// (measured once rendered, estimated before). A run of thousands of events renders only the
// few dozen rows in view and a margin, so opening and scrolling cost the same at any length.
// Pure: the component measures and scrolls.

export interface Window {
  /** The first row rendered. */
  start: number;
  /** One past the last row rendered. */
  end: number;
  /** Space above the first row rendered, px. */
  top: number;
  /** The whole list's height, px. */
  height: number;
}

/** Row heights with their running sums, so a scroll position finds its row by bisection. */
export class Heights {
  private h: number[] = [];
  /** `sums[i]`: the height of rows before `i`; valid up to `valid`. */
  private sums: number[] = [0];
  private valid = 0;

  constructor(private estimate: number) {}

  get length(): number {
    return this.h.length;
  }

  /** Makes the list `n` rows long (new rows at the estimate). */
  resize(n: number): void {
    if (n < this.h.length) this.h.length = n;
    while (this.h.length < n) this.h.push(this.estimate);
    this.valid = Math.min(this.valid, n);
  }

  /** A row's measured height; true when it changed. */
  set(i: number, px: number): boolean {
    if (i >= this.h.length || this.h[i] === px) return false;
    this.h[i] = px;
    this.valid = Math.min(this.valid, i);
    return true;
  }

  /** The height of the rows before `i`. */
  offset(i: number): number {
    const n = Math.min(i, this.h.length);
    for (let k = this.valid; k < n; k++) this.sums[k + 1] = this.sums[k] + this.h[k];
    this.valid = Math.max(this.valid, n);
    return this.sums[n];
  }

  total(): number {
    return this.offset(this.h.length);
  }

  /** The row at `px` from the top (the last one past the end). */
  at(px: number): number {
    const n = this.h.length;
    this.offset(n);
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sums[mid + 1] <= px) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(lo, Math.max(0, n - 1));
  }
}

/** The rows to render for a viewport of `viewport` px scrolled to `scrollTop`, with `margin`
 * px of rows above and below (so a quick scroll does not show blank space). */
export function windowOf(h: Heights, scrollTop: number, viewport: number, margin = 400): Window {
  const height = h.total();
  if (h.length === 0) return { start: 0, end: 0, top: 0, height };
  const start = h.at(Math.max(0, scrollTop - margin));
  const last = h.at(scrollTop + viewport + margin);
  return { start, end: last + 1, top: h.offset(start), height };
}
