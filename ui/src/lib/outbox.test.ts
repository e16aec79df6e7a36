import { afterEach, describe, expect, it } from 'vitest';
import { canSendTest, channelName, channelStatusText, itemFacts, outboxCounts, outboxKindText, outboxStateText } from './outbox';
import { when } from './format';
import { i18n } from './i18n/index.svelte';
import { outboxItem, outboxOf } from '../test/fixtures';

afterEach(() => {
  i18n.lang = 'ru';
});

describe('outbox', () => {
  it('words a channel configured with its target, or how to configure it, Russian first', () => {
    i18n.lang = 'ru';
    expect(channelName('telegram')).toBe('Кэтчер (Telegram)');
    expect(channelStatusText('telegram', { configured: true, target: '-100200' })).toBe('настроен, чат -100200');
    expect(channelStatusText('planfix', { configured: true, target: 'https://pf.example.com' })).toBe(
      'настроен, https://pf.example.com',
    );
    expect(channelStatusText('telegram', { configured: false, target: null })).toContain('[catcher]');
    expect(channelStatusText('planfix', { configured: false, target: null })).toContain('[planfix]');
    i18n.lang = 'en';
    expect(channelName('planfix')).toBe('PlanFix');
    expect(channelStatusText('telegram', { configured: true, target: '42' })).toBe('configured, chat 42');
    expect(channelStatusText('telegram', { configured: false, target: null })).toBe(
      "not configured ([catcher] in the daemon's config)",
    );
  });

  it('words kinds, states and the counts', () => {
    expect(outboxKindText('digest')).toBe('утренняя сводка');
    expect(outboxStateText('failed')).toBe('не доставлено');
    expect(outboxCounts({ pending: 2, sent: 12, failed: 0 })).toBe('ждут отправки: 2 · отправлено: 12 · не доставлено: 0');
    i18n.lang = 'en';
    expect(outboxKindText('gate_failed')).toBe('cannot pass the gate');
    expect(outboxStateText('pending')).toBe('pending');
    expect(outboxCounts({ pending: 0, sent: 3, failed: 1 })).toBe('pending: 0 · sent: 3 · failed: 1');
  });

  it('a test message needs the Catcher configured, and an outbox to know it by', () => {
    expect(canSendTest(null)).toBe(false);
    expect(canSendTest(outboxOf())).toBe(true);
    expect(canSendTest(outboxOf([], { catcher: { configured: false, target: null } }))).toBe(false);
  });

  it('a sent message: when it was queued, its attempts and when it was sent', () => {
    const item = outboxItem({ attempts: 2 });
    expect(itemFacts(item)).toEqual([
      `создано ${when(item.created_at)}`,
      'попыток: 2',
      `отправлено ${when(item.sent_at)}`,
    ]);
  });

  it('a pending message says when it is tried next; one not tried yet has no attempts', () => {
    const retry = outboxItem({ state: 'pending', attempts: 3, sent_at: null, next_at: '2026-12-02T09:05:00Z', last_error: '429' });
    expect(itemFacts(retry)).toEqual([`создано ${when(retry.created_at)}`, 'попыток: 3', `следующая попытка ${when(retry.next_at)}`]);
    const fresh = outboxItem({ state: 'pending', attempts: 0, sent_at: null, next_at: '2026-12-02T09:00:00Z' });
    expect(itemFacts(fresh)).toEqual([`создано ${when(fresh.created_at)}`, `следующая попытка ${when(fresh.next_at)}`]);
  });

  it('a message written at night is held for the morning digest, first, with no next attempt', () => {
    const held = outboxItem({ kind: 'ready', state: 'pending', attempts: 0, held: true, sent_at: null, next_at: '2026-12-02T03:00:00Z' });
    expect(itemFacts(held)).toEqual(['ночной, в утреннюю сводку', `создано ${when(held.created_at)}`]);
    i18n.lang = 'en';
    expect(itemFacts(held)[0]).toBe('held for the morning digest');
    // Sent in the digest: still said to have been held.
    expect(itemFacts({ ...held, state: 'sent', sent_at: '2026-12-02T08:00:02Z' })[0]).toBe('held for the morning digest');
  });
});
