import { describe, expect, it } from 'vitest';
import { i18n } from './i18n/index.svelte';
import { bytes, when, whenSeconds } from './format';

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

describe('sizes', () => {
  it('bytes, then KB and MB with one decimal, in the current language', () => {
    i18n.lang = 'en';
    expect(bytes(999)).toBe('999 bytes');
    expect(bytes(200_000)).toBe('195.3 KB');
    expect(bytes(5 * 1024 * 1024)).toBe('5 MB');
    i18n.lang = 'ru';
    expect(bytes(200_000)).toBe('195,3 КБ');
  });
});
