// A line's chain of roles as the Lines page words it: which steps check the work (each in a
// session of its own, with a verdict), the levels a line may still be raised to, a finding as
// one line of text. Pure: the page and its tests call these with the daemon's values.
import type { Finding, Level, Line, LineState, StepKind } from './generated/conveyor';

/** The kinds that check the work in a fresh session of their own and give a verdict. */
export const CHECKERS: readonly StepKind[] = ['tester', 'reviewer', 'skeptic', 'extra'];

export const isChecker = (kind: StepKind): boolean => CHECKERS.includes(kind);

/** Each level's place (a `Record`, so a level added in Rust fails to compile here until it
 * has one): light = executor, tests, clicks; medium = + reviewer; full = + skeptic, extras. */
const RANK: Record<Level, number> = { light: 0, medium: 1, full: 2 };

/** The levels, lowest first. */
export const LEVELS: readonly Level[] = (Object.keys(RANK) as Level[]).sort((a, b) => RANK[a] - RANK[b]);

/** The levels a line at `level` may be raised to: a level only goes up (the daemon refuses a
 * lower one with `level_lower`); every level while the planner has chosen none. */
export function higherLevels(level: Level | null): Level[] {
  return LEVELS.filter((l) => level === null || RANK[l] > RANK[level]);
}

/** States in which a level changes nothing: the line's checks are over (the daemon refuses
 * with `invalid_state`). */
export const LEVEL_SETTLED: readonly LineState[] = ['awaiting_acceptance', 'accepted', 'cancelled'];

/** The levels Anton may raise the line to now; none once its checks are over. */
export function raisableLevels(line: Pick<Line, 'state' | 'level'>): Level[] {
  return LEVEL_SETTLED.includes(line.state) ? [] : higherLevels(line.level);
}

/** A finding as `path:line: text`, `path: text` without a line, the text alone without a
 * path (as the daemon hands it to the fixer). */
export function findingText(f: Finding): string {
  if (!f.path) return f.text;
  return f.line !== undefined ? `${f.path}:${f.line}: ${f.text}` : `${f.path}: ${f.text}`;
}

/** A session id short enough to read beside a step: its first 8 characters (a UUID's first
 * group), as git shortens a commit. */
export const shortId = (id: string): string => id.slice(0, 8);
