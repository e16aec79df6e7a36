import { describe, expect, it } from 'vitest';
import { i18n } from './i18n/index.svelte';
import { when, whenSeconds } from './format';

describe('times', () => {
  it('to the second for health tries, to the minute otherwise; the text itself when it does not parse', () => {
    i18n.lang = 'en';
    const iso = '2026-12-02T07:41:30Z';
    // Any time zone: the seconds stay 30, the minutes may move by half an hour.
    expect(whenSeconds(iso)).toMatch(/\d:\d\d:30(?!\d)/);
    expect(when(iso)).not.toMatch(/\d:\d\d:\d\d/);
    expect(whenSeconds('garbage')).toBe('garbage');
    expect(whenSeconds(null)).toBe('—');
    i18n.lang = 'ru';
  });
});
