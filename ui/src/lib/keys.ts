// The Review page's keys, read from a keydown event. Letters are read by the physical key
// (`event.code`: `KeyJ` is `j` on an English layout and `о` on a Russian one), so the same keys
// work in both languages without switching the layout; where a platform gives no code, the
// character is read instead, a Russian letter as the Latin one on the same key. Pure: the
// page decides what an action does.

export type ReviewAction =
  | { kind: 'next' }
  | { kind: 'prev' }
  /** `n` counts from 1, as the key and the option's label do. */
  | { kind: 'option'; n: number }
  | { kind: 'free' }
  | { kind: 'open' }
  | { kind: 'accept' }
  | { kind: 'change' }
  | { kind: 'takeBack' }
  | { kind: 'help' }
  | { kind: 'close' };

type Letter = 'j' | 'k' | 'e' | 'o' | 'a' | 'c' | 'u';

const LETTERS: Record<Letter, ReviewAction> = {
  j: { kind: 'next' },
  k: { kind: 'prev' },
  e: { kind: 'free' },
  o: { kind: 'open' },
  a: { kind: 'accept' },
  c: { kind: 'change' },
  u: { kind: 'takeBack' },
};

/** The letters by physical key. */
const BY_CODE: Record<string, Letter> = {
  KeyJ: 'j',
  KeyK: 'k',
  KeyE: 'e',
  KeyO: 'o',
  KeyA: 'a',
  KeyC: 'c',
  KeyU: 'u',
};

/** The Russian (ЙЦУКЕН) letters on the same keys, for events without a code. */
const CYRILLIC: Record<string, Letter> = { о: 'j', л: 'k', у: 'e', щ: 'o', ф: 'a', с: 'c', г: 'u' };

/** What a keydown event reads from (a `KeyboardEvent` is one). */
export interface KeyLike {
  key: string;
  code: string;
  shiftKey: boolean;
  ctrlKey: boolean;
  altKey: boolean;
  metaKey: boolean;
  isComposing?: boolean;
}

/** The page's action for a key pressed outside a text box, or null for any other key. */
export function reviewKey(e: KeyLike): ReviewAction | null {
  if (e.ctrlKey || e.altKey || e.metaKey || e.isComposing) return null;
  if (e.key === 'Escape') return { kind: 'close' };
  // `?` is Shift+/ on an English layout and Shift+7 on a Russian one: the character decides,
  // and Shift with the `/` key (a `,` on a Russian layout) too.
  if (e.key === '?' || (e.code === 'Slash' && e.shiftKey)) return { kind: 'help' };
  // No physical key known (a synthetic event, an on-screen keyboard): the character.
  const code = e.code === 'Unidentified' ? '' : e.code;
  const digit = /^(?:Digit|Numpad)([1-9])$/.exec(code)?.[1] ?? (code ? undefined : /^[1-9]$/.exec(e.key)?.[0]);
  if (digit) return e.shiftKey ? null : { kind: 'option', n: Number(digit) };
  if (e.shiftKey) return null;
  const letter = BY_CODE[code] ?? (code ? undefined : byCharacter(e.key));
  return letter ? LETTERS[letter] : null;
}

function byCharacter(key: string): Letter | undefined {
  const k = key.toLowerCase();
  return k in LETTERS ? (k as Letter) : CYRILLIC[k];
}

/** Whether a key pressed in `target` is typing: a text box, a list box, editable text. */
export function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof Element)) return false;
  if (target.closest('textarea, select, [contenteditable=""], [contenteditable="true"]')) return true;
  if (target instanceof HTMLInputElement) {
    return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file'].includes(target.type);
  }
  return false;
}

/** Enter in an answer box sends it; Shift+Enter is a new line; Enter while an input method
 * composes a word is the input method's. */
export function isSend(e: KeyLike): boolean {
  return e.key === 'Enter' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey && !e.isComposing;
}
