import { describe, expect, it } from 'vitest';
import { blocksOf, cardsOf, nextOpen, orphansOf, progressOf } from './morning';
import { night, question, reviewOf, reviewProject } from '../test/fixtures';
import type { Question, Review } from './generated/conveyor';

const answered = (id: string, at: string | null, over: Partial<Question> = {}) =>
  question({ id, status: 'answered', answer: '8080', answered_at: at, ...over });

/** Two projects: p1 with two open questions, one later and one answered this morning; p2 with
 * one open and one answered before the night began (its line still running). */
const review: Review = reviewOf(
  [
    reviewProject({
      questions: [question({ id: 'a1' }), question({ id: 'a2' })],
      later: [question({ id: 'a3', urgent: false }), question({ id: 'a4', urgent: true })],
      answered: [answered('a5', '2026-11-30T06:00:00Z')],
    }),
    reviewProject({
      project_id: 'p2',
      name: 'blog',
      questions: [question({ id: 'b1', project_id: 'p2' })],
      answered: [answered('b2', '2026-11-28T12:00:00Z', { project_id: 'p2' })],
    }),
  ],
  { night: night({ since: '2026-11-29T22:00:00Z' }) },
);

const ids = (qs: Question[]) => qs.map((q) => q.id);

describe('the morning list', () => {
  it('walks per project: the frozen list, later (urgent first), answered; then answers of unlisted projects', () => {
    const here = [answered('z1', '2026-11-30T07:00:00Z', { project_id: 'p9' })];
    const blocks = blocksOf(review, here);
    const cards = cardsOf(blocks, orphansOf(review, here));
    expect(ids(cards)).toEqual(['a1', 'a2', 'a4', 'a3', 'a5', 'b1', 'b2', 'z1']);
  });

  it('an answer given here shows answered until the daemon lists it; one the daemon lists open again stays open', () => {
    const here = [answered('a1', '2026-11-30T07:00:00Z'), answered('x', '2026-11-30T07:00:00Z')];
    const [p1] = blocksOf(reviewOf([reviewProject({ questions: [question({ id: 'a1' })] })]), here);
    expect(ids(p1.questions)).toEqual(['a1']);
    expect(ids(p1.answered)).toEqual(['x']);
  });

  it('progress counts the open questions and the answers of this morning, not older ones', () => {
    const cards = cardsOf(blocksOf(review, []), []);
    // Open: a1 a2 a3 a4 b1; answered since the night began: a5; b2 is older.
    expect(progressOf(review, cards, [])).toEqual({ answered: 1, total: 6, done: false });
    // An answer given in this app counts whatever its time says.
    const here = [answered('b2', '2026-11-28T12:00:00Z', { project_id: 'p2' })];
    expect(progressOf(review, cardsOf(blocksOf(review, here), []), here).answered).toBe(2);
  });

  it('is done when nothing is left to answer, and not when nothing was ever asked', () => {
    const all = reviewOf([reviewProject({ answered: [answered('a5', '2026-11-30T06:00:00Z')] })]);
    expect(progressOf(all, cardsOf(blocksOf(all, []), []), [])).toEqual({ answered: 1, total: 1, done: true });
    const none = reviewOf();
    expect(progressOf(none, [], [])).toEqual({ answered: 0, total: 0, done: false });
  });

  it('after an answer the next open question takes the focus, else the first open one before it', () => {
    const cards = cardsOf(blocksOf(review, []), []);
    expect(nextOpen(cards, 'a1')).toBe('a2');
    expect(nextOpen(cards, 'a3')).toBe('b1');
    expect(nextOpen(cards, 'b1')).toBe('a1');
    expect(nextOpen([question({ id: 'only' })], 'only')).toBeNull();
  });
});
