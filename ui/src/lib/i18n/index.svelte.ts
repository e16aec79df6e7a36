// The current language and `t()`. Russian by default; the choice is saved in the app's
// preferences through ipc.
import { messages, type Lang, type MessageKey } from './messages';

const state = $state<{ lang: Lang }>({ lang: 'ru' });

export const i18n = {
  get lang(): Lang {
    return state.lang;
  },
  set lang(l: Lang) {
    state.lang = l;
    if (typeof document !== 'undefined') document.documentElement.lang = l;
  },
};

export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  const text = messages[state.lang][key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name: string) =>
    name in params ? formatParam(params[name]) : `{${name}}`,
  );
}

function formatParam(v: string | number): string {
  return typeof v === 'number' ? v.toLocaleString(state.lang === 'ru' ? 'ru-RU' : 'en-US') : v;
}
