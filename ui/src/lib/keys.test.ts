import { describe, expect, it } from 'vitest';
import { isSend, isTyping, reviewKey, type KeyLike } from './keys';

/** A key pressed with no modifier: `code` the physical key, `key` what the layout makes of it. */
const press = (key: string, code: string, over: Partial<KeyLike> = {}): KeyLike => ({
  key,
  code,
  shiftKey: false,
  ctrlKey: false,
  altKey: false,
  metaKey: false,
  ...over,
});

describe('reviewKey', () => {
  it('reads the letters by their physical key, in the English and the Russian layout alike', () => {
    const en = [press('j', 'KeyJ'), press('k', 'KeyK'), press('e', 'KeyE'), press('o', 'KeyO'), press('a', 'KeyA'), press('c', 'KeyC'), press('u', 'KeyU')];
    const ru = [press('о', 'KeyJ'), press('л', 'KeyK'), press('у', 'KeyE'), press('щ', 'KeyO'), press('ф', 'KeyA'), press('с', 'KeyC'), press('г', 'KeyU')];
    const kinds = ['next', 'prev', 'free', 'open', 'accept', 'change', 'takeBack'];
    expect(en.map((e) => reviewKey(e)?.kind)).toEqual(kinds);
    expect(ru.map((e) => reviewKey(e)?.kind)).toEqual(kinds);
  });

  it('without a code (some platforms), reads the character, a Russian letter as the Latin one on its key', () => {
    expect(['j', 'J', 'о', 'л', 'щ', 'ф'].map((k) => reviewKey(press(k, ''))?.kind)).toEqual(['next', 'next', 'next', 'prev', 'open', 'accept']);
    expect(reviewKey(press('г', 'Unidentified'))?.kind).toBe('takeBack');
    expect(reviewKey(press('2', 'Unidentified'))).toEqual({ kind: 'option', n: 2 });
    // The key decides by its place, not its letter: `о` on the J key is `j`, not `o`.
    expect(reviewKey(press('o', 'KeyJ'))?.kind).toBe('next');
  });

  it('reads options 1–9 from the digit row and the keypad, not with Shift', () => {
    expect(reviewKey(press('1', 'Digit1'))).toEqual({ kind: 'option', n: 1 });
    expect(reviewKey(press('9', 'Numpad9'))).toEqual({ kind: 'option', n: 9 });
    expect(reviewKey(press('3', ''))).toEqual({ kind: 'option', n: 3 });
    expect(reviewKey(press('0', 'Digit0'))).toBeNull();
    // Shift+1 is `!` in both layouts: not an option.
    expect(reviewKey(press('!', 'Digit1', { shiftKey: true }))).toBeNull();
  });

  it('`?` is help: Shift+/ in English, Shift+7 in Russian, and Shift on the `/` key in any layout', () => {
    expect(reviewKey(press('?', 'Slash', { shiftKey: true }))?.kind).toBe('help');
    expect(reviewKey(press('?', 'Digit7', { shiftKey: true }))?.kind).toBe('help');
    expect(reviewKey(press(',', 'Slash', { shiftKey: true }))?.kind).toBe('help');
    expect(reviewKey(press('Escape', 'Escape'))?.kind).toBe('close');
  });

  it('leaves alone keys with Ctrl, Alt or Meta, Shift with a letter, a composing input method and other keys', () => {
    expect(reviewKey(press('j', 'KeyJ', { ctrlKey: true }))).toBeNull();
    expect(reviewKey(press('a', 'KeyA', { metaKey: true }))).toBeNull();
    expect(reviewKey(press('1', 'Digit1', { altKey: true }))).toBeNull();
    expect(reviewKey(press('J', 'KeyJ', { shiftKey: true }))).toBeNull();
    expect(reviewKey(press('j', 'KeyJ', { isComposing: true }))).toBeNull();
    expect(reviewKey(press('x', 'KeyX'))).toBeNull();
    expect(reviewKey(press('Enter', 'Enter'))).toBeNull();
  });
});

describe('isTyping', () => {
  it('is true in text boxes, list boxes and editable text, false on buttons, checkboxes and cards', () => {
    const el = (html: string) => {
      document.body.innerHTML = html;
      return document.body.firstElementChild;
    };
    expect(isTyping(el('<textarea></textarea>'))).toBe(true);
    expect(isTyping(el('<input type="text">'))).toBe(true);
    expect(isTyping(el('<input>'))).toBe(true);
    expect(isTyping(el('<select><option>a</option></select>'))).toBe(true);
    expect(isTyping(el('<div contenteditable="true"></div>'))).toBe(true);
    expect(isTyping(el('<button>b</button>'))).toBe(false);
    expect(isTyping(el('<input type="checkbox">'))).toBe(false);
    expect(isTyping(el('<article tabindex="0"></article>'))).toBe(false);
    expect(isTyping(null)).toBe(false);
    document.body.innerHTML = '';
  });
});

describe('isSend', () => {
  it('is Enter alone: not Shift+Enter, not while an input method composes', () => {
    expect(isSend(press('Enter', 'Enter'))).toBe(true);
    expect(isSend(press('Enter', 'NumpadEnter'))).toBe(true);
    expect(isSend(press('Enter', 'Enter', { shiftKey: true }))).toBe(false);
    expect(isSend(press('Enter', 'Enter', { isComposing: true }))).toBe(false);
    expect(isSend(press('j', 'KeyJ'))).toBe(false);
  });
});
