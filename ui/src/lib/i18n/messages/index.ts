// The interface texts, one file per page or panel: each holds its Russian texts first and its
// English second, the English typed by the Russian's keys, so a key missing from the English
// or one only the English has is a compile error in that file. `{name}` marks a parameter.
// This file joins the areas into the catalogue `t()` reads.
import * as app from './app';
import * as deepwork from './deepwork';
import * as lines from './lines';
import * as lineDetail from './line-detail';
import * as runs from './runs';
import * as budget from './budget';
import * as review from './review';
import * as settings from './settings';
import * as preflight from './preflight';
import * as outbox from './outbox';
import * as reasons from './reasons';
import * as errors from './errors';

export const areas = { app, deepwork, lines, lineDetail, runs, budget, review, settings, preflight, outbox, reasons, errors };

export const languages = ['ru', 'en'] as const;
export type Lang = (typeof languages)[number];

type Areas = typeof areas;
type AreaName = keyof Areas;

/** Every key of every area: `t()` takes nothing else. */
export type MessageKey = { [A in AreaName]: keyof Areas[A]['ru'] }[AreaName];

/** Keys that two areas both define (the later one would silently win). */
type DefinedTwice = {
  [A in AreaName]: { [B in Exclude<AreaName, A>]: keyof Areas[A]['ru'] & keyof Areas[B]['ru'] }[Exclude<AreaName, A>];
}[AreaName];

/** Keys that an area has in one language only (in case an English side loses its type). */
type OneLanguageOnly = {
  [A in AreaName]:
    | Exclude<keyof Areas[A]['ru'], keyof Areas[A]['en']>
    | Exclude<keyof Areas[A]['en'], keyof Areas[A]['ru']>;
}[AreaName];

// The catalogue's shape: a compile error here names the keys at fault.
const shape: [DefinedTwice | OneLanguageOnly] extends [never]
  ? true
  : { definedTwice: DefinedTwice; oneLanguageOnly: OneLanguageOnly } = true;
void shape;

const join = (lang: Lang) =>
  Object.assign({}, ...Object.values(areas).map((area) => area[lang])) as Record<MessageKey, string>;

export const messages: Record<Lang, Record<MessageKey, string>> = { ru: join('ru'), en: join('en') };
