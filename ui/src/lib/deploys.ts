// A line's deploys as the Lines page words them: the commit shortened as git does, what the
// health checks said, and whether the deploy was undone. Pure: the page and its tests call
// these with the daemon's values.
import type { Deploy, DeployOutcome, HealthCheck } from './generated/conveyor';

/** A commit as git shortens it: its first 7 characters. */
export const shortSha = (commit: string): string => commit.slice(0, 7);

/** The outcomes that end a deploy badly: the page marks them as such. */
export const FAILED: readonly DeployOutcome[] = ['rolled_back', 'red'];

export const failed = (d: Pick<Deploy, 'outcome'>): boolean => FAILED.includes(d.outcome);

/** The health checks' tally: how many tries, how many green, and whether the last was. */
export function healthTally(health: HealthCheck[]): { tries: number; ok: number; lastOk: boolean | null } {
  return {
    tries: health.length,
    ok: health.filter((h) => h.ok).length,
    lastOk: health.length > 0 ? health[health.length - 1].ok : null,
  };
}

/** Milliseconds from the deploy's start to its end; none while it runs or when a time does
 * not parse. */
export function deployMs(d: Pick<Deploy, 'started_at' | 'finished_at'>): number | null {
  if (!d.finished_at) return null;
  const ms = Date.parse(d.finished_at) - Date.parse(d.started_at);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** The deploys newest first (the daemon sends them oldest first): the one that matters now
 * is on top. */
export const newestFirst = (deploys: Deploy[]): Deploy[] => [...deploys].reverse();
