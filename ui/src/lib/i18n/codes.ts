// The daemon's codes in the interface's words: why a line waits, what a preflight item checks,
// why a call was refused. The daemon's own text stays beside them, for the details.
import { t } from './index.svelte';
import type { ErrorCode, IpcError } from '../ipc';
import type { PreflightCode, ReasonCode } from '../generated/conveyor';

/** App error codes whose message is the daemon's own text (worded here, shown beneath). */
const DAEMON_TEXT: readonly ErrorCode[] = ['daemon', 'unmerged', 'invalid_state'];

export interface Worded {
  /** In the interface's language. */
  text: string;
  /** The daemon's text, when it is not already part of `text`. */
  raw: string | null;
}

/** A failed call's error: by the daemon's code when the daemon gave one (it says more than the
 * app's: `invalid_state` with `answer_started` is an answer whose step has started), else by
 * the app's. */
export function wordError(e: IpcError): Worded {
  if (e.daemonCode) return { text: t(`daemonError.${e.daemonCode}`), raw: e.message || null };
  if (DAEMON_TEXT.includes(e.code)) return { text: t(`error.${e.code}`), raw: e.message || null };
  return { text: t(`error.${e.code}`, { message: e.message }), raw: null };
}

/** Why a line waits or stopped. */
export const reasonText = (code: ReasonCode): string => t(`reason.${code}`);

/** What a preflight item checks. */
export const preflightName = (code: PreflightCode): string => t(`preflight.code.${code}`);
