// The outbox as Settings words it: whether the Catcher (Telegram) and PlanFix are configured
// and where they go, the counts, and what each message is, where it stands and what is known
// about its delivery. Pure but for the language: the panel and its tests call these with the
// daemon's values.
import { t } from './i18n/index.svelte';
import { when } from './format';
import type { Channel, ChannelStatus, Outbox, OutboxItem, OutboxKind, OutboxState } from './generated/conveyor';

export const channelName = (c: Channel): string => t(`outbox.channel.${c}`);
export const outboxKindText = (k: OutboxKind): string => t(`outbox.kind.${k}`);
export const outboxStateText = (s: OutboxState): string => t(`outbox.state.${s}`);

/** A channel's status: configured and where it goes (the chat, PlanFix's address), or how to
 * configure it. */
export function channelStatusText(channel: Channel, s: ChannelStatus): string {
  return s.configured
    ? t(`outbox.configured.${channel}`, { target: s.target ?? '?' })
    : t(`outbox.notConfigured.${channel}`);
}

export const outboxCounts = (o: Pick<Outbox, 'pending' | 'sent' | 'failed'>): string =>
  t('outbox.counts', { pending: o.pending, sent: o.sent, failed: o.failed });

/** Whether a test message can be asked for: only with the Catcher configured (else the daemon
 * refuses with `catcher_off`). */
export const canSendTest = (o: Outbox | null): boolean => o?.catcher.configured === true;

/** What is known of a message's delivery, in order: written at night and so held for the
 * morning's digest (a sent one went in it), when it was queued, the attempts so far, the next
 * one (while pending; a held one waits for the night's end instead), when it was sent. The last
 * error is apart: the panel shows it as an error. */
export function itemFacts(item: OutboxItem): string[] {
  const facts: string[] = [];
  if (item.held) facts.push(t('outbox.held'));
  facts.push(t('outbox.createdAt', { time: when(item.created_at) }));
  if (item.attempts > 0) facts.push(t('outbox.attempts', { n: item.attempts }));
  if (item.state === 'pending' && !item.held && item.next_at) facts.push(t('outbox.nextAt', { time: when(item.next_at) }));
  if (item.state === 'sent' && item.sent_at) facts.push(t('outbox.sentAt', { time: when(item.sent_at) }));
  return facts;
}
