import { describe, expect, it } from 'vitest';
import { messages } from './messages';
import { i18n, t } from './index.svelte';

describe('messages', () => {
  it('has the same keys and parameters in every language', () => {
    const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(messages.ru) as (keyof typeof messages.ru)[]) {
      expect(messages.en[key], key).toBeTypeOf('string');
      expect(params(messages.en[key]), key).toEqual(params(messages.ru[key]));
    }
  });

  it('fills parameters and follows the language', () => {
    i18n.lang = 'ru';
    expect(t('folder.files', { n: 3 })).toBe('файлов: 3');
    i18n.lang = 'en';
    expect(t('folder.files', { n: 1200 })).toBe('1,200 files');
    i18n.lang = 'ru';
  });
});
