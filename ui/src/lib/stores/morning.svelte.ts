// The Review page's own state: which question has the focus, which answer is being changed,
// whether the keys' help is open, and what was last said to a screen reader; and what each
// key does. The morning's list itself is the conveyor store's (`review`, `answered`); this
// derives the page's blocks, the order the keys walk and the progress from it.
import { tick } from 'svelte';
import { t } from '../i18n/index.svelte';
import { wordError } from '../i18n/codes';
import type { ReviewAction } from '../keys';
import { blocksOf, cardsOf, isOpen, nextOpen, orphansOf, progressOf } from '../morning';
import type { Answer, Question } from '../generated/conveyor';
import { lineKey, questionKey, type ConveyorStore } from './conveyor.svelte';

/** Where a focus request puts the cursor: on the card, or in its answer box. */
export type FocusTarget = 'card' | 'free';

export class Morning {
  readonly store: ConveyorStore;
  private readonly openLine: (id: string) => void;

  focusedId = $state<string | null>(null);
  /** Bumped by every focus request, so that a card takes the focus even when it already had
   * the id (a request the card has seen is `handled`: a card re-made by a reload takes the
   * focus back only when the focus was lost with the old one). */
  focusSeq = $state(0);
  focusTarget = $state<FocusTarget>('card');
  handled = 0;
  /** The answered question whose answer is being changed (its options shown again). */
  changing = $state<string | null>(null);
  help = $state(false);
  /** The last outcome, for screen readers (an `aria-live` region). */
  announcement = $state('');

  /** The answers given in this app, but those of lines accepted or cancelled since: the
   * daemon lists them no more, and neither does the page. */
  here = $derived.by(() => {
    const gone = new Set(this.store.lines.filter((l) => l.state === 'accepted' || l.state === 'cancelled').map((l) => l.id));
    return this.store.answered.filter((q) => !gone.has(q.line_id));
  });
  blocks = $derived.by(() => blocksOf(this.store.review, this.here));
  orphans = $derived.by(() => orphansOf(this.store.review, this.here));
  cards = $derived.by(() => cardsOf(this.blocks, this.orphans));
  progress = $derived.by(() => progressOf(this.store.review, this.cards, this.here));
  focused = $derived.by(() => this.cards.find((q) => q.id === this.focusedId) ?? null);

  constructor(store: ConveyorStore, openLine: (id: string) => void = () => {}) {
    this.store = store;
    this.openLine = openLine;
  }

  /** Puts the focus on question `id` (its card, or its answer box). */
  focusOn(id: string, target: FocusTarget = 'card'): void {
    this.focusedId = id;
    this.focusTarget = target;
    this.focusSeq += 1;
  }

  /** The page opened, or the focused question left the list: the first open question (or
   * the first of any) takes the focus. */
  settle(): void {
    if (this.focused || this.cards.length === 0) return;
    const first = this.cards.find(isOpen) ?? this.cards[0];
    this.focusOn(first.id);
  }

  /** Where card `id` stands in the walk: 1-based, and of how many. */
  position(id: string): { n: number; total: number } {
    return { n: this.cards.findIndex((q) => q.id === id) + 1, total: this.cards.length };
  }

  async key(action: ReviewAction): Promise<void> {
    switch (action.kind) {
      case 'next':
      case 'prev':
        return this.move(action.kind === 'next' ? 1 : -1);
      case 'help':
        this.help = !this.help;
        return;
      case 'close':
        if (this.help) this.closeHelp();
        else this.changing = null;
        return;
    }
    const q = this.focused;
    if (!q) {
      this.say(t('announce.nothing'));
      return;
    }
    switch (action.kind) {
      case 'option':
        return this.choose(q, action.n);
      case 'free':
        return this.free(q);
      case 'open':
        return this.open(q);
      case 'accept':
        await this.accept(q);
        return;
      case 'change':
        return this.change(q);
      case 'takeBack':
        await this.takeBack(q);
        return;
    }
  }

  closeHelp(): void {
    this.help = false;
    if (this.focusedId) this.focusOn(this.focusedId);
  }

  private move(delta: number): void {
    if (this.cards.length === 0) return;
    const at = this.cards.findIndex((q) => q.id === this.focusedId);
    const to = at < 0 ? 0 : Math.min(Math.max(at + delta, 0), this.cards.length - 1);
    if (this.changing && this.changing !== this.cards[to].id) this.changing = null;
    this.focusOn(this.cards[to].id);
  }

  private async choose(q: Question, n: number): Promise<void> {
    if (!this.answerable(q)) return;
    const option = q.options[n - 1];
    if (option === undefined) {
      this.say(t('announce.noOption', { n }));
      return;
    }
    await this.answer(q, { option });
  }

  /** `e`: the answer box; on an answer that can still change, its change begins there. */
  private free(q: Question): void {
    if (q.status === 'answered' && q.changeable) this.changing = q.id;
    if (!this.answerable(q)) return;
    this.focusOn(q.id, 'free');
  }

  /** Whether the keys may answer `q` now: it is open, or its answer is being changed. An
   * answered one says how to change it. */
  private answerable(q: Question): boolean {
    // Its answer is on its way: a second key press is not a second answer.
    if (this.inFlight(q.id)) return false;
    if (isOpen(q) || this.changing === q.id) return true;
    if (q.status === 'answered') this.say(t(q.changeable ? 'announce.answeredAlready' : 'announce.notChangeable'));
    return false;
  }

  /**
   * Sends an answer (or a changed one). At keyboard speed the focus goes on at once to the
   * next open question not already waiting for its own answer, while this one is on its way;
   * a refusal is said and shown on its card. When none is left, the morning is done.
   */
  async answer(q: Question, answer: Answer): Promise<boolean> {
    const wasOpen = isOpen(q);
    if (wasOpen && this.focusedId === q.id) {
      const next = nextOpen(
        this.cards.filter((c) => c.id === q.id || !this.inFlight(c.id)),
        q.id,
      );
      if (next) this.focusOn(next);
    }
    const ok = await this.store.answer(q.id, answer);
    if (!ok) {
      this.sayError(q.id);
      return false;
    }
    const text = 'option' in answer ? answer.option : answer.text;
    this.say(t(wasOpen ? 'announce.answered' : 'announce.changed', { answer: text }));
    if (this.changing === q.id) this.changing = null;
    if (wasOpen && this.progress.done) this.say(t('announce.done'));
    await this.keepFocus(q.id);
    return true;
  }

  /** Whether `id`'s answer (or take-back) is on its way. */
  private inFlight(id: string): boolean {
    return this.store.busy[questionKey(id)] ?? false;
  }

  /** After a card changed under the focus (its options gone, or the card re-made): the
   * focus, when it fell to the page, goes back to the question it was on. */
  private async keepFocus(id: string): Promise<void> {
    await tick();
    const active = typeof document === 'undefined' ? null : document.activeElement;
    if (this.focusedId === id && (!active || active === document.body)) this.focusOn(id);
  }

  /** `o`: the question's line on the Lines page. */
  open(q: Question): void {
    this.openLine(q.line_id);
  }

  change(q: Question): void {
    if (q.status !== 'answered') return;
    if (!q.changeable) {
      this.say(t('announce.notChangeable'));
      return;
    }
    this.changing = this.changing === q.id ? null : q.id;
  }

  async takeBack(q: Question): Promise<boolean> {
    if (q.status !== 'answered') return false;
    if (!q.changeable) {
      this.say(t('announce.notChangeable'));
      return false;
    }
    const ok = await this.store.takeBack(q.id);
    if (!ok) {
      this.sayError(q.id);
      return false;
    }
    if (this.changing === q.id) this.changing = null;
    this.say(t('announce.takenBack'));
    // Its card moves back to the open ones: the focus goes with it.
    await this.keepFocus(q.id);
    return true;
  }

  /** `a`: accepts the focused question's line when it awaits acceptance. */
  async accept(q: Question): Promise<boolean> {
    const line = this.store.lines.find((l) => l.id === q.line_id);
    if (line?.state !== 'awaiting_acceptance') {
      this.say(t('announce.notReady'));
      return false;
    }
    const ok = await this.store.accept(line.id);
    if (ok) {
      this.say(t('announce.accepted', { title: line.title }));
      // Its questions leave the list.
      await this.store.reload(['review']);
    } else {
      const e = this.store.error(lineKey(line.id));
      if (e) this.say(wordError(e).text);
    }
    return ok;
  }

  private say(text: string): void {
    this.announcement = text;
  }

  private sayError(id: string): void {
    const e = this.store.error(questionKey(id));
    if (e) this.say(wordError(e).text);
  }
}
