// The Review page at keyboard speed: last night at a glance and its links to the filtered
// Lines page, the keys (in the English and the Russian layout, never while typing), the
// morning's progress and its end, and answers changed or taken back while they still can be.
// The daemon behind the mocked ipc is a small fake that keeps the questions' state.
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flush } from '../test/flush';
import { conveyorMock } from '../test/conveyor-ipc';
import { line, night, preflight, preflightItem, project, question, reviewOf, reviewProject } from '../test/fixtures';
import type { Answer, Line, NightGlance, Question } from '../lib/generated/conveyor';

vi.mock('../lib/ipc', async (orig) => (await import('../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../lib/ipc'));

const { ConveyorStore } = await import('../lib/stores/conveyor.svelte');
const { IpcError } = await import('../lib/ipc');
const { i18n } = await import('../lib/i18n/index.svelte');
const Lines = (await import('./Lines.svelte')).default;
const Review = (await import('./Review.svelte')).default;

/**
 * A fake daemon: projects with their questions in order; `answer` and `takeBack` change them as
 * the daemon does (an answer stays changeable until `start(line)`: its `answer` step started).
 */
function daemon(projects: { id: string; name: string; questions: Question[] }[], glance: Partial<NightGlance> = {}) {
  const qs = new Map(projects.flatMap((p) => p.questions.map((q) => [q.id, { ...q, project_id: p.id }] as const)));
  const started = new Set<string>();
  const review = () =>
    reviewOf(
      projects.map((p) => {
        const mine = p.questions.map((q) => qs.get(q.id)!);
        return reviewProject({
          project_id: p.id,
          name: p.name,
          questions: mine.filter((q) => q.status === 'validated'),
          answered: mine.filter((q) => q.status === 'answered'),
        });
      }),
      { night: night(glance) },
    );
  api.review.mockImplementation(async () => review());
  api.answer.mockImplementation(async (id: string, a: Answer) => {
    const q = qs.get(id)!;
    if (q.status === 'answered' && !q.changeable) throw new IpcError('invalid_state', 'question: the answer step has started', null, 'answer_started');
    const next: Question = {
      ...q,
      status: 'answered',
      answer: 'option' in a ? a.option : a.text,
      changeable: !started.has(q.line_id),
      answered_at: '2026-11-30T07:00:00Z',
    };
    qs.set(id, next);
    return next;
  });
  api.takeBack.mockImplementation(async (id: string) => {
    const q = qs.get(id)!;
    if (!q.changeable) throw new IpcError('invalid_state', 'question: the answer step has started', null, 'answer_started');
    const back: Question = { ...q, status: 'validated', answer: null, changeable: false, answered_at: null };
    qs.set(id, back);
    return back;
  });
  return {
    qs,
    /** The line's `answer` step starts: its answers can no longer change. */
    start(lineId: string) {
      started.add(lineId);
      for (const [id, q] of qs) if (q.line_id === lineId) qs.set(id, { ...q, changeable: false });
    },
  };
}

const q1 = question({ id: 'q1', line_id: 'a', text: 'Which port?', options: ['8080', '9090'] });
const q2 = question({ id: 'q2', line_id: 'a', text: 'Which name?', options: ['alpha', 'beta', 'gamma'], default: 'alpha' });
const q3 = question({ id: 'q3', line_id: 'b', text: 'Keep the cache?', options: ['yes', 'no'], default: 'yes' });
const lines = (over: Partial<Record<string, Line['state']>> = {}) => [
  line('a', over.a ?? 'waiting_answer', { title: 'Ports' }),
  line('b', over.b ?? 'waiting_answer', { title: 'Cache', project_id: 'p2' }),
];

/** The English and the Russian layout's key for a physical key. */
const KEYS: Record<string, { code: string; en: string; ru: string }> = {
  j: { code: 'KeyJ', en: 'j', ru: 'о' },
  k: { code: 'KeyK', en: 'k', ru: 'л' },
  e: { code: 'KeyE', en: 'e', ru: 'у' },
  o: { code: 'KeyO', en: 'o', ru: 'щ' },
  a: { code: 'KeyA', en: 'a', ru: 'ф' },
  c: { code: 'KeyC', en: 'c', ru: 'с' },
  u: { code: 'KeyU', en: 'u', ru: 'г' },
};

/** Presses a key where the focus is (as a person would), in `layout`. */
async function press(name: string, layout: 'en' | 'ru' = 'en', init: KeyboardEventInit = {}) {
  const target = document.activeElement ?? document.body;
  const k = KEYS[name];
  const event = k
    ? { key: k[layout], code: k.code }
    : /^[1-9]$/.test(name)
      ? { key: name, code: `Digit${name}` }
      : name === '?'
        ? { key: '?', code: layout === 'en' ? 'Slash' : 'Digit7', shiftKey: true }
        : { key: name, code: name };
  await fireEvent.keyDown(target, { ...event, ...init });
  await flush();
}

const card = (id: string) => document.querySelector<HTMLElement>(`[data-testid=question][data-question-id="${id}"]`)!;
const focusedCard = () => (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('[data-testid=question]')?.dataset.questionId;
const announced = () => screen.getByTestId('review-announce').textContent;

beforeEach(() => {
  vi.resetAllMocks();
  i18n.lang = 'ru';
  api.projects.mockResolvedValue([project(), project({ id: 'p2', name: 'blog' })]);
  api.notify.mockResolvedValue(undefined);
  api.lines.mockResolvedValue(lines());
  api.review.mockResolvedValue(reviewOf());
  api.budget.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.preflight.mockResolvedValue(preflight([preflightItem()]));
  api.decisions.mockResolvedValue([]);
});
afterEach(() => cleanup());

/** The Review page over the fake daemon with q1, q2 (project shop) and q3 (project blog). */
async function open(over: { glance?: Partial<NightGlance>; questions?: Question[][] } = {}) {
  const [shop, blog] = over.questions ?? [
    [q1, q2],
    [q3],
  ];
  const fake = daemon(
    [
      { id: 'p1', name: 'shop', questions: shop },
      { id: 'p2', name: 'blog', questions: blog },
    ],
    over.glance,
  );
  const store = new ConveyorStore();
  const onOpenLines = vi.fn();
  const onOpenLine = vi.fn();
  render(Review, { store, onOpenLines, onOpenLine });
  await flush();
  return { store, fake, onOpenLines, onOpenLine };
}

describe('last night at a glance', () => {
  it('shows where the lines stand, the cost against the window and what the judge kept back; each count opens its lines', async () => {
    const { onOpenLines } = await open({
      glance: { awaiting_acceptance: 2, running: 3, waiting_answer: 1, needs_human: 1, rolled_back: 0, cost_usd: 4.5, sent_back: 4, duplicates: 2 },
    });
    const counts = screen.getAllByTestId('glance-lines');
    expect(counts.map((c) => [c.dataset.filter, c.dataset.count, c.textContent])).toEqual([
      ['awaiting_acceptance', '2', 'ждут приёмки: 2'],
      ['running', '3', 'в работе: 3'],
      ['waiting_answer', '1', 'ждут ответа: 1'],
      ['needs_human', '1', 'нужен человек: 1'],
      ['rolled_back', '0', 'откачены: 0'],
    ]);
    // Every count is a button a screen reader names with where it leads.
    expect(counts.every((c) => c.tagName === 'BUTTON')).toBe(true);
    expect(counts[0].getAttribute('aria-label')).toBe('ждут приёмки: 2 — открыть эти линии');
    const cost = screen.getByTestId('glance-cost');
    expect([cost.dataset.cost, cost.dataset.threshold, cost.dataset.over]).toEqual(['4.5', '10', 'false']);
    expect(cost.textContent).toContain('ночь стоила $4.50 из $10.00');
    expect(screen.getByTestId('glance-sent-back').textContent).toBe('вернул на доработку: 4');
    expect(screen.getByTestId('glance-duplicates').textContent).toBe('слил повторы: 2');
    expect(screen.getByTestId('night-glance').textContent).toContain('Прошлая ночь');

    await fireEvent.click(counts[0]);
    await fireEvent.click(counts[3]);
    expect(onOpenLines.mock.calls).toEqual([['awaiting_acceptance'], ['needs_human']]);

    i18n.lang = 'en';
    await flush();
    expect(screen.getAllByTestId('glance-lines')[1].textContent).toBe('running: 3');
    expect(screen.getByTestId('glance-cost').textContent).toContain('the night cost $4.50 of $10.00');
    expect(screen.getByTestId('glance-duplicates').textContent).toBe('merged as duplicates: 2');
  });

  it('a night over the threshold says so; without a window pool only the cost is shown', async () => {
    await open({ glance: { cost_usd: 12.25 } });
    expect(screen.getByTestId('glance-cost').dataset.over).toBe('true');
    expect(screen.getByTestId('glance-cost').textContent).toContain('больше порога');
    cleanup();
    await open({ glance: { cost_usd: 1, window_threshold_usd: null } });
    expect(screen.getByTestId('glance-cost').textContent).toContain('ночь стоила $1.00 (порог окна не задан)');
    expect(screen.getByTestId('glance-cost').dataset.threshold).toBe('');
  });

  it('a count opens the Lines page filtered to those lines; the filter can be changed and cleared there', async () => {
    const store = new ConveyorStore();
    api.lines.mockResolvedValue([
      line('a', 'awaiting_acceptance'),
      line('b', 'running'),
      line('c', 'gate'),
      line('d', 'queued'),
      line('e', 'needs_human'),
      line('f', 'accepted'),
      line('g', 'waiting_answer'),
    ]);
    store.showLines('running');
    render(Lines, { store });
    await flush();
    const rows = () => screen.getAllByTestId('line-row').map((r) => r.dataset.lineId);
    expect(rows().sort()).toEqual(['b', 'c', 'd']);
    expect((screen.getByTestId('lines-filter') as HTMLSelectElement).value).toBe('running');
    expect(screen.getByTestId('lines-filter-count').dataset.count).toBe('3');

    await fireEvent.change(screen.getByTestId('lines-filter'), { target: { value: 'needs_human' } });
    expect(store.lineFilter).toBe('needs_human');
    expect(rows()).toEqual(['e']);
    await fireEvent.change(screen.getByTestId('lines-filter'), { target: { value: 'rolled_back' } });
    expect(screen.queryAllByTestId('line-row')).toHaveLength(0);
    expect(screen.getByTestId('lines-filter-empty').textContent).toBe('Нет линий в этом состоянии.');
    await fireEvent.click(screen.getByTestId('lines-filter-clear'));
    expect(store.lineFilter).toBeNull();
    expect(rows()).toHaveLength(7);
  });

  it('opening one line clears the filter and selects it', async () => {
    const store = new ConveyorStore();
    api.line.mockImplementation(async (id: string) => ({ ...line(id, 'waiting_answer'), journal: [], questions: [], budget: { cost_usd: 0, runs: 0, tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 } } }));
    api.diff.mockResolvedValue({ base: 'a', head: 'b', files: [] });
    store.showLines('needs_human');
    await store.showLine('a');
    expect([store.lineFilter, store.selectedId]).toEqual([null, 'a']);
    expect(api.line).toHaveBeenCalledWith('a');
  });
});

describe('the keys', () => {
  it('the first open question has the focus when the page opens; j and k move it, in the Russian layout too', async () => {
    await open();
    expect(focusedCard()).toBe('q1');
    expect(card('q1').dataset.focused).toBe('true');
    // A roving tabindex: only the focused card is in the tab order, and it is named for a
    // screen reader.
    expect([card('q1').tabIndex, card('q2').tabIndex]).toEqual([0, -1]);
    expect(card('q1').getAttribute('aria-label')).toBe('Вопрос 1 из 3, shop: Which port?');

    await press('j', 'ru');
    expect(focusedCard()).toBe('q2');
    await press('j', 'en');
    expect(focusedCard()).toBe('q3');
    expect(card('q3').getAttribute('aria-label')).toBe('Вопрос 3 из 3, blog: Keep the cache?');
    // The last stays the last.
    await press('j', 'ru');
    expect(focusedCard()).toBe('q3');
    await press('k', 'ru');
    expect(focusedCard()).toBe('q2');
    await press('k', 'en');
    expect(focusedCard()).toBe('q1');
    // With Ctrl the key is the browser's.
    await press('j', 'en', { ctrlKey: true });
    expect(focusedCard()).toBe('q1');
  });

  it('1–9 answer with that option and the focus goes on to the next open question', async () => {
    await open();
    await press('2');
    expect(api.answer).toHaveBeenCalledWith('q1', { option: '9090' });
    expect(card('q1').dataset.status).toBe('answered');
    expect(focusedCard()).toBe('q2');
    expect(announced()).toBe('Ответ отправлен: 9090');
    // In the Russian layout the digits are the same keys.
    await press('3', 'ru');
    expect(api.answer).toHaveBeenLastCalledWith('q2', { option: 'gamma' });
    expect(focusedCard()).toBe('q3');
    // An option the question does not have: said, nothing sent.
    await press('5');
    expect(api.answer).toHaveBeenCalledTimes(2);
    expect(announced()).toBe('У вопроса нет варианта 5');
  });

  it('at typing speed the focus goes on before the daemon answers; a question whose answer is on its way takes no second one', async () => {
    await open();
    const answer = api.answer.getMockImplementation()!;
    const waiting: (() => void)[] = [];
    api.answer.mockImplementation((id: string, a: Answer) => new Promise((r) => waiting.push(() => r(answer(id, a)))));
    await press('1');
    expect(focusedCard()).toBe('q2');
    expect(card('q1').dataset.status).toBe('validated');
    await press('1', 'ru');
    expect(focusedCard()).toBe('q3');
    await press('2');
    // q3 was the last: the next open one not on its way is none, so the focus stays.
    expect(focusedCard()).toBe('q3');
    await press('1');
    expect(api.answer.mock.calls).toEqual([
      ['q1', { option: '8080' }],
      ['q2', { option: 'alpha' }],
      ['q3', { option: 'no' }],
    ]);
    for (const done of waiting.splice(0)) done();
    await flush();
    await flush();
    expect(['q1', 'q2', 'q3'].map((id) => card(id).dataset.status)).toEqual(['answered', 'answered', 'answered']);
    expect(screen.getByTestId('review-progress').textContent).toContain('отвечено 3 из 3');
    expect(focusedCard()).toBe('q3');
  });

  it('e goes to the answer box; typing there triggers no key; Enter sends, Shift+Enter does not; Esc leaves', async () => {
    await open();
    await press('j');
    await press('e', 'ru');
    const box = card('q2').querySelector('textarea')!;
    expect(document.activeElement).toBe(box);
    // Letters and digits typed in the box are text, not keys.
    for (const k of ['j', 'k', '1', 'o', 'a', 'u']) await press(k, 'ru');
    await press('?');
    expect(document.activeElement).toBe(box);
    expect(api.answer).not.toHaveBeenCalled();
    expect(screen.queryByTestId('keys-help')).toBeNull();

    await fireEvent.input(box, { target: { value: ' call it delta ' } });
    await press('Enter', 'en', { shiftKey: true });
    expect(api.answer).not.toHaveBeenCalled();
    await press('Escape');
    expect(focusedCard()).toBe('q2');
    expect(document.activeElement).toBe(card('q2'));
    await press('e');
    await press('Enter');
    expect(api.answer).toHaveBeenCalledWith('q2', { text: 'call it delta' });
    expect(card('q2').dataset.status).toBe('answered');
    expect(focusedCard()).toBe('q3');
  });

  it("o opens the question's line; a accepts it only when it awaits acceptance", async () => {
    const { onOpenLine } = await open();
    await press('o', 'ru');
    expect(onOpenLine).toHaveBeenCalledWith('a');
    // q1's line waits for its answer: `a` says so and accepts nothing.
    await press('a', 'ru');
    expect(api.accept).not.toHaveBeenCalled();
    expect(announced()).toBe('Линия этого вопроса не ждёт приёмки');
    expect(card('q1').querySelector('[data-testid=question-accept]')).toBeNull();
  });

  it('? shows the keys in a dialog that has the focus; Esc closes it and the focus goes back', async () => {
    await open();
    await press('j');
    await press('?', 'ru');
    const dialog = screen.getByTestId('keys-help');
    expect(dialog.getAttribute('role')).toBe('dialog');
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    expect(document.activeElement).toBe(screen.getByTestId('keys-help-close'));
    const items = screen.getAllByTestId('keys-help-item').map((i) => i.textContent);
    expect(items).toContain('забрать ответ, пока линия его не взяла');
    expect(items).toHaveLength(11);
    // Modal: the page's keys wait.
    await press('j');
    expect(screen.getByTestId('keys-help')).toBeTruthy();
    await press('Escape');
    expect(screen.queryByTestId('keys-help')).toBeNull();
    expect(focusedCard()).toBe('q2');
    // The button opens it too; `?` again closes it.
    await fireEvent.click(screen.getByTestId('keys-help-button'));
    await flush();
    expect(screen.getByTestId('keys-help')).toBeTruthy();
    await press('?');
    expect(screen.queryByTestId('keys-help')).toBeNull();
  });

  it('every control on a card has a name; the option buttons name their key', async () => {
    await open();
    const c = card('q1');
    const options = [...c.querySelectorAll<HTMLElement>('[data-testid=option-button]')];
    expect(options.map((b) => [b.getAttribute('aria-label'), b.getAttribute('aria-keyshortcuts')])).toEqual([
      ['Вариант 1: 8080', '1'],
      ['Вариант 2: 9090', '2'],
    ]);
    expect(c.querySelector('textarea')?.getAttribute('aria-label')).toBe('Свой ответ на вопрос');
    expect(c.querySelector('[data-testid=question-open-line]')?.getAttribute('aria-label')).toBe('Открыть линию «Ports»');
    for (const b of c.querySelectorAll('button')) {
      expect(b.getAttribute('aria-label') ?? b.textContent?.trim(), b.outerHTML).toBeTruthy();
    }
  });
});

describe('accepting from the morning page', () => {
  it('a focused question whose line awaits acceptance is accepted with a, or by its button', async () => {
    api.lines.mockResolvedValue(lines({ b: 'awaiting_acceptance' }));
    api.accept.mockResolvedValue(line('b', 'accepted', { title: 'Cache', project_id: 'p2' }));
    await open({ questions: [[q1], [question({ ...q3, status: 'answered', answer: 'no', answered_at: '2026-11-30T06:00:00Z' })]] });
    expect(card('q3').querySelector('[data-testid=question-line-ready]')?.textContent).toBe('линия ждёт приёмки');
    await press('j');
    expect(focusedCard()).toBe('q3');
    await press('a', 'ru');
    expect(api.accept).toHaveBeenCalledWith('b');
    expect(announced()).toBe('Линия «Cache» принята');
  });

  it("an accepted line's questions leave the page, those answered here too; the focus goes to the first left", async () => {
    const { store } = await open();
    await press('j');
    await press('j');
    await press('1');
    expect(card('q3').dataset.status).toBe('answered');
    api.lines.mockResolvedValue(lines({ b: 'awaiting_acceptance' }));
    api.accept.mockResolvedValue(line('b', 'accepted', { title: 'Cache', project_id: 'p2' }));
    const stillOpen = reviewOf([reviewProject({ questions: [q1, q2] })]);
    await store.reload(['lines']);
    await flush();
    api.review.mockResolvedValue(stillOpen);
    api.lines.mockResolvedValue(lines({ b: 'accepted' }));
    // The answer sent the focus round to the first open question; back to q3.
    expect(focusedCard()).toBe('q1');
    await press('j');
    await press('j');
    expect(focusedCard()).toBe('q3');
    await press('a');
    expect(api.accept).toHaveBeenCalledWith('b');
    expect(screen.queryAllByTestId('question').map((c) => c.dataset.questionId)).toEqual(['q1', 'q2']);
    expect(focusedCard()).toBe('q1');
  });
});

describe("the morning's progress", () => {
  it('counts the answers over the list and ends with the morning done', async () => {
    await open();
    const progress = () => screen.getByTestId('review-progress');
    expect([progress().dataset.answered, progress().dataset.total]).toEqual(['0', '3']);
    expect(progress().textContent).toContain('отвечено 0 из 3');
    expect(screen.queryByTestId('review-done')).toBeNull();
    await press('1');
    expect(progress().textContent).toContain('отвечено 1 из 3');
    await press('2');
    await press('1');
    expect(progress().textContent).toContain('отвечено 3 из 3');
    expect(screen.getByTestId('review-done').textContent).toBe('Утро разобрано: ответы на все вопросы отправлены.');
    expect(announced()).toBe('Утро разобрано');
    i18n.lang = 'en';
    await flush();
    expect(progress().textContent).toContain('answered 3 of 3');
    expect(screen.getByTestId('review-done').textContent).toBe('The morning is done: every question has its answer.');
  });

  it('an answer taken back is open again: the morning is not done', async () => {
    await open({ questions: [[q1], []] });
    await press('1');
    expect(screen.getByTestId('review-done')).toBeTruthy();
    await press('u');
    expect(api.takeBack).toHaveBeenCalledWith('q1');
    expect(screen.queryByTestId('review-done')).toBeNull();
    expect(screen.getByTestId('review-progress').textContent).toContain('отвечено 0 из 1');
  });
});

describe('changing an answer and taking it back', () => {
  it('an answered question says whether it can still change; one that can offers change and take back', async () => {
    const old = { status: 'answered' as const, answered_at: '2026-11-30T06:00:00Z' };
    await open({
      questions: [
        [question({ ...q1, ...old, answer: '8080', changeable: true }), question({ ...q2, ...old, answer: 'beta', changeable: false })],
        [q3],
      ],
    });
    expect(card('q1').dataset.changeable).toBe('true');
    expect(card('q1').querySelector('[data-testid=question-changeable]')?.textContent).toContain('можно изменить или забрать');
    expect(card('q1').querySelector('[data-testid=answer-change]')).not.toBeNull();
    expect(card('q1').querySelector('[data-testid=answer-take-back]')).not.toBeNull();
    expect(card('q2').dataset.changeable).toBe('false');
    expect(card('q2').querySelector('[data-testid=question-fixed]')?.textContent).toBe('ответ уже у линии: изменить нельзя');
    expect(card('q2').querySelector('[data-testid=answer-take-back]')).toBeNull();
  });

  it('by mouse: change shows the options again, the current one marked; take back opens the question again', async () => {
    await open({ questions: [[question({ ...q1, status: 'answered', answer: '8080', changeable: true })], [q3]] });
    await fireEvent.click(card('q1').querySelector('[data-testid=answer-change]')!);
    await flush();
    const options = [...card('q1').querySelectorAll<HTMLElement>('[data-testid=option-button]')];
    expect(options.map((b) => [b.dataset.option, b.classList.contains('current')])).toEqual([
      ['8080', true],
      ['9090', false],
    ]);
    await fireEvent.click(options[1]);
    await flush();
    expect(api.answer).toHaveBeenCalledWith('q1', { option: '9090' });
    expect(card('q1').querySelector('[data-testid=question-answer]')?.textContent).toBe('Ответ: 9090');
    expect(card('q1').querySelectorAll('[data-testid=option-button]')).toHaveLength(0);

    await fireEvent.click(card('q1').querySelector('[data-testid=answer-take-back]')!);
    await flush();
    expect(api.takeBack).toHaveBeenCalledWith('q1');
    expect(card('q1').dataset.status).toBe('validated');
    expect(card('q1').querySelectorAll('[data-testid=option-button]')).toHaveLength(2);
  });

  it('by keys: c then a digit changes the answer, Esc keeps it, u takes it back; the focus stays on the question', async () => {
    await open({ questions: [[q1], [q3]] });
    await press('1');
    expect(focusedCard()).toBe('q3');
    await press('k');
    expect(focusedCard()).toBe('q1');
    // An answered question does not take a digit without `c`.
    await press('2');
    expect(api.answer).toHaveBeenCalledTimes(1);
    expect(announced()).toBe('Вопрос уже отвечен: c — изменить ответ, u — забрать');
    await press('c', 'ru');
    expect(card('q1').querySelector('[data-testid=answer-keep]')).not.toBeNull();
    await press('Escape');
    expect(card('q1').querySelector('[data-testid=answer-keep]')).toBeNull();
    await press('c');
    await press('2', 'ru');
    expect(api.answer).toHaveBeenLastCalledWith('q1', { option: '9090' });
    expect(announced()).toBe('Ответ изменён: 9090');
    expect(focusedCard()).toBe('q1');
    await press('u', 'ru');
    expect(api.takeBack).toHaveBeenCalledWith('q1');
    expect(card('q1').dataset.status).toBe('validated');
    expect(focusedCard()).toBe('q1');
    expect(announced()).toBe('Ответ забран, вопрос снова открыт');
  });

  it('after its answer step started the daemon refuses (answer_started): worded on the card, which then says it is fixed', async () => {
    const { fake } = await open({ questions: [[q1], [q3]] });
    await press('1');
    await press('k');
    expect(card('q1').dataset.changeable).toBe('true');
    // The line's answer step starts while the page still shows the answer as changeable.
    fake.start('a');
    api.review.mockClear();
    await press('u');
    expect(api.takeBack).toHaveBeenCalledWith('q1');
    const error = card('q1').querySelector<HTMLElement>('[data-testid=answer-error]')!;
    // The app's code is a state refusal; the daemon's says why.
    expect(error.dataset.code).toBe('invalid_state');
    expect(error.textContent).toContain('Шаг, несущий этот ответ линии, уже начался');
    expect(error.querySelector('.raw')?.textContent).toContain('the answer step has started');
    expect(announced()).toBe('Шаг, несущий этот ответ линии, уже начался: изменить или забрать ответ нельзя.');
    // The list is loaded again: the card now says the line has the answer.
    expect(api.review).toHaveBeenCalled();
    expect(card('q1').dataset.changeable).toBe('false');
    expect(card('q1').querySelector('[data-testid=question-fixed]')).not.toBeNull();
    expect(card('q1').dataset.status).toBe('answered');
  });

  it('a change refused the same way is worded too', async () => {
    const { fake } = await open({ questions: [[q1], [q3]] });
    await press('1');
    await press('k');
    await press('c');
    fake.start('a');
    await press('2');
    expect(api.answer).toHaveBeenLastCalledWith('q1', { option: '9090' });
    expect(card('q1').querySelector('[data-testid=answer-error]')?.textContent).toContain('уже начался');
    expect(card('q1').querySelector('[data-testid=question-answer]')?.textContent).toBe('Ответ: 8080');
    expect(card('q1').dataset.changeable).toBe('false');
    i18n.lang = 'en';
    await flush();
    expect(card('q1').querySelector('[data-testid=answer-error]')?.textContent).toContain('The step carrying this answer to the line has started');
  });
});
