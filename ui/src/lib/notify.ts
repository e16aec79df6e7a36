// When the app shows an OS notification for a conveyor event: only when a line needs Anton
// (a question the judge validated, a line going `needs_human`) or is ready to accept
// (`awaiting_acceptance`). A raw question the judge has yet to look at is not news (most are
// decided or sent back), nor is `waiting_answer` (its question was news when validated).
// Everything else stays on the pages. Pure: the store passes in what it knows about the line
// and calls `conveyor.notify` with the result.
import type { Notice } from './ipc';
import type { Event, LineState } from './generated/conveyor';
import { t } from './i18n/index.svelte';

export interface LineKnown {
  title: string;
  /** The line's state as the store last saw it. */
  state: LineState;
}

/**
 * The notice for `event`, or null. `line` is what the store knows about the event's line
 * (its title, and its state before this event: a repeated state is not news).
 */
export function noticeFor(event: Event, line: LineKnown | undefined): Notice | null {
  const title = line?.title ?? event.line_id ?? '';
  if (event.kind === 'question') {
    // The daemon says `validated` when the judge (or the daemon) put questions on the list;
    // new raw ones come as `unvalidated`, the rest of its question events with no state.
    if (event.state !== 'validated') return null;
    return { title: t('notify.question.title'), body: t('notify.question.body', { title }) };
  }
  if (event.kind !== 'line' || event.state === null) return null;
  if (line && line.state === event.state) return null;
  switch (event.state) {
    case 'awaiting_acceptance':
      return { title: t('notify.ready.title'), body: t('notify.ready.body', { title }) };
    case 'needs_human':
      return {
        title: t('notify.needs_human.title'),
        body: t('notify.needs_human.body', { title, reason: event.detail ?? t('notify.noReason') }),
      };
    default:
      return null;
  }
}
