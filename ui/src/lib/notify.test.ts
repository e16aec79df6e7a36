import { afterEach, describe, expect, it } from 'vitest';
import { ev } from '../test/fixtures';
import { i18n } from './i18n/index.svelte';
import { noticeFor } from './notify';

const running = { title: 'Кнопка входа', state: 'running' as const };

afterEach(() => (i18n.lang = 'ru'));

describe('noticeFor', () => {
  it('a line ready to accept is news, with its title', () => {
    i18n.lang = 'ru';
    expect(noticeFor(ev({ state: 'awaiting_acceptance' }), running)).toEqual({
      title: 'Можно принимать',
      body: '«Кнопка входа» готова к приёмке',
    });
  });

  it('a line that needs Anton is news; the reason is told', () => {
    i18n.lang = 'en';
    expect(noticeFor(ev({ state: 'needs_human', detail: 'gate failed 3 times' }), running)).toEqual({
      title: 'A line needs a human',
      body: '"Кнопка входа": gate failed 3 times',
    });
    // Waiting for an answer (or for the judge) is not news of its own: a validated question is.
    expect(noticeFor(ev({ state: 'waiting_answer', detail: 'waiting for the judge' }), running)).toBeNull();
  });

  it('a question the judge validated is news; a raw, sorted or answered one is not', () => {
    expect(noticeFor(ev({ kind: 'question', state: 'validated', detail: '1 validated' }), running)?.body).toBe(
      'Новый вопрос в линии «Кнопка входа»',
    );
    expect(noticeFor(ev({ kind: 'question', state: 'unvalidated', detail: '2 new questions' }), running)).toBeNull();
    expect(noticeFor(ev({ kind: 'question', state: null }), running)).toBeNull();
    expect(noticeFor(ev({ kind: 'question', state: 'answered' }), running)).toBeNull();
  });

  it('everything else stays quiet', () => {
    for (const state of ['queued', 'running', 'gate', 'merging', 'accepted', 'cancelled', 'blocked', 'waiting_budget'] as const) {
      expect(noticeFor(ev({ state }), running), state).toBeNull();
    }
    expect(noticeFor(ev({ state: null, detail: 'priority 3' }), running)).toBeNull();
    for (const kind of ['step', 'journal', 'budget', 'project'] as const) {
      expect(noticeFor(ev({ kind, state: 'awaiting_acceptance' }), running), kind).toBeNull();
    }
  });

  it('a state the line already had is not news twice', () => {
    expect(noticeFor(ev({ state: 'awaiting_acceptance' }), { title: 'x', state: 'awaiting_acceptance' })).toBeNull();
  });

  it('an unknown line is named by its id', () => {
    expect(noticeFor(ev({ state: 'awaiting_acceptance', line_id: 'abc' }), undefined)?.body).toBe(
      '«abc» готова к приёмке',
    );
  });
});
