// The morning's list as the Review page shows it: per project the open questions (the frozen
// list, then what was validated after the freeze, the urgent first), the answered ones and the
// decided ones; the order the keys walk; and the morning's progress. Pure: the page passes in
// the daemon's review and the answers given in this app.
import type { Decision, Question, Review, ReviewProject } from './generated/conveyor';

export interface Block {
  project: ReviewProject;
  questions: Question[];
  later: Question[];
  answered: Question[];
  decided: Decision[];
}

/**
 * The page's blocks. `answeredHere` are the answers given in this app since it started (the
 * daemon's review may not list them yet): an answer the daemon does not list yet is shown
 * answered, and a question the daemon still lists open is shown open (its answer taken back).
 */
export function blocksOf(review: Review | null, answeredHere: Question[]): Block[] {
  return (review?.projects ?? []).map((p) => {
    const open = [...p.questions, ...p.later];
    const mine = answeredHere.filter(
      (a) => a.project_id === p.project_id && !open.some((q) => q.id === a.id) && !p.answered.some((q) => q.id === a.id),
    );
    const answered = [...p.answered, ...mine];
    const answeredIds = new Set(answered.map((q) => q.id));
    // Urgent ones first: they cannot wait for tomorrow's list.
    const later = [...p.later].sort((a, b) => Number(b.urgent) - Number(a.urgent));
    const decided = p.decided.filter((d) => !answeredIds.has(d.id) && !answeredIds.has(d.question_id ?? ''));
    return { project: p, questions: p.questions, later, answered, decided };
  });
}

/** Answers given here whose project the daemon lists no more (nothing else open there). */
export function orphansOf(review: Review | null, answeredHere: Question[]): [string, Question[]][] {
  const listed = new Set((review?.projects ?? []).map((p) => p.project_id));
  const byProject = new Map<string, Question[]>();
  for (const q of answeredHere) {
    if (!listed.has(q.project_id)) byProject.set(q.project_id, [...(byProject.get(q.project_id) ?? []), q]);
  }
  return [...byProject];
}

/** Every question card in the page's order: per project the frozen list, later, answered;
 * then the orphans. What `j` and `k` walk. */
export function cardsOf(blocks: Block[], orphans: [string, Question[]][]): Question[] {
  return [...blocks.flatMap((b) => [...b.questions, ...b.later, ...b.answered]), ...orphans.flatMap(([, qs]) => qs)];
}

export const isOpen = (q: Question): boolean => q.status === 'validated';

export interface Progress {
  answered: number;
  total: number;
  /** Nothing is left to answer on the page, and something was. */
  done: boolean;
}

/**
 * The morning's progress over the questions on the list: every open one (the frozen list and
 * what came later: both can be answered here), and every one answered this morning — since
 * the night began (`night.since`), or in this app. An answer taken back counts as open again;
 * an older answer whose line is still running is shown but is not this morning's work.
 */
export function progressOf(review: Review | null, cards: Question[], answeredHere: Question[]): Progress {
  const since = review ? Date.parse(review.night.since) : NaN;
  const here = new Set(answeredHere.map((q) => q.id));
  const thisMorning = (q: Question) =>
    here.has(q.id) || (q.answered_at !== null && !(Date.parse(q.answered_at) < since));
  const open = cards.filter(isOpen).length;
  const answered = cards.filter((q) => q.status === 'answered' && thisMorning(q)).length;
  const total = open + answered;
  return { answered, total, done: total > 0 && open === 0 };
}

/** The open question to focus after `id` is answered: the next open one after it in `order`,
 * else the first open one before it; null when none is left. */
export function nextOpen(cards: Question[], id: string): string | null {
  const at = cards.findIndex((q) => q.id === id);
  const after = cards.slice(at + 1).find((q) => isOpen(q) && q.id !== id);
  const before = cards.slice(0, Math.max(at, 0)).find((q) => isOpen(q) && q.id !== id);
  return (after ?? before)?.id ?? null;
}
