import { describe, expect, it } from 'vitest';
import { areas, languages, messages } from './messages';
import { i18n, t } from './index.svelte';
import { wordError } from './codes';
import {
  DAEMON_ERROR_CODES,
  OUTBOX_CHANNELS,
  OUTBOX_KINDS,
  OUTBOX_STATES,
  RUN_OUTCOMES,
  PREFLIGHT_CODES,
  REASON_CODES,
} from '../generated/codes';
import { IpcError } from '../ipc';

describe('messages', () => {
  it('has the same keys and parameters in every language', () => {
    const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(messages.ru) as (keyof typeof messages.ru)[]) {
      expect(messages.en[key], key).toBeTypeOf('string');
      expect(params(messages.en[key]), key).toEqual(params(messages.ru[key]));
    }
  });

  it('defines each key in one area only, with both its languages in that area', () => {
    const areaOf = new Map<string, string>();
    const twice: string[] = [];
    for (const [name, area] of Object.entries(areas)) {
      expect(Object.keys(area.en).sort(), name).toEqual(Object.keys(area.ru).sort());
      for (const key of Object.keys(area.ru)) {
        if (areaOf.has(key)) twice.push(`${key}: ${areaOf.get(key)} and ${name}`);
        areaOf.set(key, name);
      }
    }
    expect(twice).toEqual([]);
    expect(Object.keys(messages.ru)).toHaveLength(areaOf.size);
  });

  it('fills parameters and follows the language', () => {
    i18n.lang = 'ru';
    expect(t('folder.files', { n: 3 })).toBe('файлов: 3');
    i18n.lang = 'en';
    expect(t('folder.files', { n: 1200 })).toBe('1,200 files');
    i18n.lang = 'ru';
  });
});

describe("the daemon's codes", () => {
  // The lists are generated from the Rust enums (src-tauri/src/bindings.rs), so a code added
  // to the daemon fails here until it has its words.
  const families: [string, readonly string[]][] = [
    ['reason', REASON_CODES],
    ['preflight.code', PREFLIGHT_CODES],
    ['daemonError', DAEMON_ERROR_CODES],
    ['outbox.channel', OUTBOX_CHANNELS],
    ['outbox.configured', OUTBOX_CHANNELS],
    ['outbox.notConfigured', OUTBOX_CHANNELS],
    ['outbox.kind', OUTBOX_KINDS],
    ['outbox.state', OUTBOX_STATES],
    ['runOutcome', RUN_OUTCOMES],
  ];

  it('come from the generated lists', () => {
    expect(REASON_CODES).toContain('preflight');
    expect(PREFLIGHT_CODES).toContain('agent_login');
    expect(DAEMON_ERROR_CODES).toContain('not_found');
    expect(DAEMON_ERROR_CODES).toContain('catcher_off');
    expect(OUTBOX_KINDS).toContain('digest');
  });

  it.each(families)('every %s code has a message in every language', (prefix, codes) => {
    const catalogue = (lang: (typeof languages)[number]) => messages[lang] as Record<string, string | undefined>;
    const missing = languages.flatMap((lang) =>
      codes.filter((code) => !catalogue(lang)[`${prefix}.${code}`]?.trim()).map((code) => `${lang}: ${prefix}.${code}`),
    );
    expect(missing).toEqual([]);
  });

  it('a daemon refusal is worded by its code, its own text kept beneath', () => {
    i18n.lang = 'ru';
    const e = new IpcError('daemon', 'no project p9', null, 'unknown_project');
    expect(wordError(e)).toEqual({ text: 'Такого проекта нет.', raw: 'no project p9' });
    i18n.lang = 'en';
    expect(wordError(e).text).toBe('No such project.');
    // The daemon's code says more than the app's: a state refusal because the answer's step
    // has started.
    i18n.lang = 'ru';
    expect(wordError(new IpcError('invalid_state', 'question q1: started', null, 'answer_started'))).toEqual({
      text: 'Шаг, несущий этот ответ линии, уже начался: изменить или забрать ответ нельзя.',
      raw: 'question q1: started',
    });
    i18n.lang = 'en';
    // Without the daemon's code: the app's words, the text still beneath.
    expect(wordError(new IpcError('daemon', 'bad gateway', null))).toEqual({
      text: 'The daemon answered with an error.',
      raw: 'bad gateway',
    });
    // The app's own errors keep their text inside the message.
    expect(wordError(new IpcError('daemon_unreachable', 'connection refused', null))).toEqual({
      text: 'The daemon is unreachable: connection refused',
      raw: null,
    });
    i18n.lang = 'ru';
  });
});
