import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { flush } from '../test/flush';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { conveyorMock } from '../test/conveyor-ipc';
import {
  budget,
  budgetPool,
  decision,
  detail,
  entry,
  line as plainLine,
  noTokens,
  notLoggedIn,
  outboxItem,
  outboxOf,
  preflight,
  preflightItem,
  project,
  question,
  reviewOf,
  reviewProject,
  runningStep,
  step,
} from '../test/fixtures';
import type { Line, LineDetail, LineDiff } from '../lib/generated/conveyor';

vi.mock('../lib/ipc', async (orig) => (await import('../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../lib/ipc'));

const { ConveyorStore } = await import('../lib/stores/conveyor.svelte');
const { IpcError } = await import('../lib/ipc');
const { i18n } = await import('../lib/i18n/index.svelte');
const Lines = (await import('./Lines.svelte')).default;
const Review = (await import('./Review.svelte')).default;
const ConveyorSettings = (await import('../components/ConveyorSettings.svelte')).default;

/** A line at priority 2 whose planner is done and whose executor failed. */
const line = (id: string, state: Line['state'], over: Partial<Line> = {}): Line =>
  plainLine(id, state, {
    priority: 2,
    steps: [
      step({ kind: 'planner', title: 'plan', cost_usd: 0.12, duration_ms: 65000 }),
      step({ id: 's2', n: 2, title: 'write', state: 'failed', size: 'l', attempts: 2, cost_usd: 0.3, error: 'check failed' }),
    ],
    cost_usd: 0.42,
    ...over,
  });

/** The line with a decision and a malformed entry in its journal. */
const detailOf = (l: Line): LineDetail =>
  detail(l, {
    journal: [
      entry({ line_id: l.id, why: 'free' }),
      entry({ id: 2, line_id: l.id, kind: null, text: null, why: null, reversible: null, expensive: null, valid: false, error: 'expected value', raw: '{oops' }),
    ],
    budget: { cost_usd: 0.42, runs: 3, tokens: noTokens },
  });

const diff: LineDiff = {
  base: 'abc',
  head: 'def',
  files: [
    {
      path: 'src/main.rs',
      change: 'modified',
      binary: false,
      patch: '@@ -1,2 +1,2 @@\n fn main() {\n-    println!("old");\n+    let s = "<script>alert(1)</script>";\n',
    },
    { path: 'logo.png', change: 'added', binary: true, patch: '' },
  ],
};

beforeEach(() => {
  vi.resetAllMocks();
  i18n.lang = 'ru';
  api.projects.mockResolvedValue([project()]);
  api.notify.mockResolvedValue(undefined);
  api.lines.mockResolvedValue([]);
  api.review.mockResolvedValue(reviewOf());
  api.budget.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.preflight.mockResolvedValue(preflight([preflightItem()]));
  api.decisions.mockResolvedValue([]);
  api.outbox.mockResolvedValue(outboxOf());
});
afterEach(() => cleanup());

describe('Lines page', () => {
  it('shows the selected line: steps, reason, journal with the malformed entry flagged, and the diff', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'awaiting_acceptance', { reason: 'merged, waiting for Anton' });
    api.lines.mockResolvedValue([l, line('b', 'queued')]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    await Promise.all([store.loadLines(), store.loadProjects()]);
    render(Lines, { store });
    const rows = screen.getAllByTestId('line-row');
    expect(rows.map((r) => r.dataset.lineId)).toEqual(['a', 'b']);
    await fireEvent.click(rows[0]);
    await flush();

    const detail = screen.getByTestId('line-detail');
    expect(detail.dataset.state).toBe('awaiting_acceptance');
    expect(screen.getAllByTestId('step-row').map((r) => r.dataset.state)).toEqual(['done', 'failed']);
    expect(screen.getAllByTestId('step-row')[0].textContent).toContain('1 мин 5 с');
    // The planner's size shows beside the executor's title, with what it is for.
    const size = screen.getByTestId('step-size');
    expect(size.textContent).toBe('L');
    expect(size.title).toBe('Размер шага по оценке постановщика: L. По нему бюджет оценивает шаг до запуска.');
    expect(screen.getAllByTestId('step-row')[1].contains(size)).toBe(true);
    expect(screen.getByTestId('line-reason').textContent).toContain('merged, waiting for Anton');
    const journal = screen.getAllByTestId('journal-entry');
    expect(journal[0].textContent).toContain('Used port 8080');
    expect(journal[1].classList.contains('malformed')).toBe(true);
    expect(journal[1].textContent).toContain('{oops');

    const files = screen.getAllByTestId('diff-file');
    expect(files.map((f) => f.dataset.path)).toEqual(['src/main.rs', 'logo.png']);
    expect(files[0].querySelector('.hljs-keyword')?.textContent).toBe('fn');
    expect(files[0].querySelector('script')).toBeNull();
    expect(files[0].querySelector('tr.add')?.textContent).toContain('<script>alert(1)</script>');
    expect(files[0].querySelector('tr.del')?.textContent).toContain('println!("old");');
    expect(files[1].textContent).toContain('двоичный файл');
  });

  it('a line awaiting acceptance says it no longer holds its project', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'awaiting_acceptance');
    api.lines.mockResolvedValue([l]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    await store.loadLines();
    await store.select('a');
    render(Lines, { store });
    await flush();
    expect(screen.getByTestId('accept-free').textContent).toContain('проект она больше не держит');
    expect(screen.getByTestId('accept-button')).toBeTruthy();
  });

  it('an accept refused as unmerged is a message on the line', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'awaiting_acceptance');
    api.lines.mockResolvedValue([l]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    api.accept.mockRejectedValue(new IpcError('unmerged', 'line/a is not in main', null));
    await store.loadLines();
    await store.select('a');
    render(Lines, { store });
    await fireEvent.click(screen.getByTestId('accept-button'));
    await flush();
    expect(screen.getByTestId('line-error').textContent).toContain('не влита в main');
    expect(screen.getByTestId('line-detail')).toBeTruthy();
  });

  it('sends remarks, the priority and a cancel for the selected line', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'awaiting_acceptance');
    api.lines.mockResolvedValue([l]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    api.remarks.mockResolvedValue(line('a', 'queued'));
    api.setPriority.mockResolvedValue(line('a', 'awaiting_acceptance', { priority: 3 }));
    api.cancel.mockResolvedValue(line('a', 'cancelled'));
    await store.loadLines();
    await store.select('a');
    render(Lines, { store });
    await fireEvent.input(screen.getByTestId('remarks-text'), { target: { value: 'rename it' } });
    await fireEvent.click(screen.getByTestId('remarks-send'));
    await flush();
    expect(api.remarks).toHaveBeenCalledWith('a', 'rename it');
    await fireEvent.click(screen.getByTestId('priority-up'));
    await flush();
    expect(api.setPriority).toHaveBeenCalledWith('a', 3);
    await fireEvent.click(screen.getByTestId('cancel-button'));
    await flush();
    expect(api.cancel).toHaveBeenCalledWith('a');
  });

  it('queues a line and adds a project from the forms', async () => {
    const store = new ConveyorStore();
    const blog = project({ id: 'p2', name: 'blog', repo_path: '/srv/blog', main_branch: 'trunk' });
    api.lines.mockResolvedValue([]);
    api.createProject.mockResolvedValue(blog);
    api.createLine.mockResolvedValue(line('n', 'queued'));
    await store.loadProjects();
    render(Lines, { store });
    await flush();
    await fireEvent.input(screen.getByTestId('project-name'), { target: { value: 'blog' } });
    await fireEvent.input(screen.getByTestId('project-repo'), { target: { value: '/srv/blog' } });
    await fireEvent.input(screen.getByTestId('project-main'), { target: { value: 'trunk' } });
    api.projects.mockResolvedValue([project(), blog]);
    await fireEvent.click(screen.getByTestId('project-add'));
    await flush();
    expect(api.createProject).toHaveBeenCalledWith({ name: 'blog', repo_path: '/srv/blog', main_branch: 'trunk' });
    expect((screen.getByTestId('line-project') as HTMLSelectElement).value).toBe('p2');

    await fireEvent.input(screen.getByTestId('line-title'), { target: { value: 'Login button' } });
    await fireEvent.input(screen.getByTestId('line-task'), { target: { value: 'Add it' } });
    await fireEvent.input(screen.getByTestId('line-priority'), { target: { value: '4' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    expect(api.createLine).toHaveBeenCalledWith({ project_id: 'p2', title: 'Login button', task: 'Add it', priority: 4 });
  });

  it('queues a line with its PlanFix task, and the line shows it', async () => {
    const store = new ConveyorStore();
    const queued = line('n', 'queued', { planfix_task: '4217' });
    api.createLine.mockResolvedValue(queued);
    api.lines.mockResolvedValue([queued]);
    api.line.mockResolvedValue(detailOf(queued));
    api.diff.mockResolvedValue(diff);
    await store.loadProjects();
    render(Lines, { store });
    await flush();
    await fireEvent.input(screen.getByTestId('line-title'), { target: { value: 'Report' } });
    await fireEvent.input(screen.getByTestId('line-task'), { target: { value: 'Do it' } });
    await fireEvent.input(screen.getByTestId('line-planfix-task'), { target: { value: ' #4217 ' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    expect(api.createLine).toHaveBeenCalledWith({ project_id: 'p1', title: 'Report', task: 'Do it', priority: 0, planfix_task: '#4217' });
    expect((screen.getByTestId('line-planfix-task') as HTMLInputElement).value).toBe('');

    await store.select('n');
    await flush();
    expect(screen.getByTestId('line-detail').querySelector('[data-testid=line-planfix-task]')?.textContent).toBe(
      'Задача ПланФикса #4217',
    );
  });

  it('sends no PlanFix task when the field is left empty, and a line without one shows none', async () => {
    const store = new ConveyorStore();
    const queued = line('n', 'queued');
    api.createLine.mockResolvedValue(queued);
    api.lines.mockResolvedValue([queued]);
    api.line.mockResolvedValue(detailOf(queued));
    api.diff.mockResolvedValue(diff);
    await store.loadProjects();
    render(Lines, { store });
    await flush();
    await fireEvent.input(screen.getByTestId('line-title'), { target: { value: 'Plain' } });
    await fireEvent.input(screen.getByTestId('line-planfix-task'), { target: { value: '  ' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    expect(api.createLine.mock.calls[0][0]).not.toHaveProperty('planfix_task');
    await store.select('n');
    await flush();
    expect(screen.getByTestId('line-detail').querySelector('[data-testid=line-planfix-task]')).toBeNull();
  });

  it('a PlanFix task that is not a number is refused at its field, worded, and kept for fixing', async () => {
    const store = new ConveyorStore();
    api.createLine.mockRejectedValue(
      new IpcError('daemon', 'planfix_task "PF-12" is not a PlanFix task number', 'planfix_task', 'bad_planfix_task'),
    );
    await store.loadProjects();
    render(Lines, { store });
    await flush();
    await fireEvent.input(screen.getByTestId('line-title'), { target: { value: 'Report' } });
    await fireEvent.input(screen.getByTestId('line-planfix-task'), { target: { value: 'PF-12' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    const field = screen.getByTestId('line-planfix-task') as HTMLInputElement;
    expect(field.value).toBe('PF-12');
    expect(field.closest('label')?.classList.contains('bad')).toBe(true);
    const error = screen.getByTestId('line-planfix-error');
    expect(error.firstChild?.textContent).toBe('Это не номер задачи ПланФикса (например, 1234 или #1234).');
    expect(error.querySelector('.raw')?.textContent).toContain('PF-12');
    // At the field, not again under the button.
    expect(screen.queryByTestId('line-add-error')).toBeNull();

    // Fixed and sent again: the error goes.
    api.createLine.mockResolvedValue(line('n', 'queued', { planfix_task: '12' }));
    await fireEvent.input(field, { target: { value: '12' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    expect(screen.queryByTestId('line-planfix-error')).toBeNull();
    expect(field.closest('label')?.classList.contains('bad')).toBe(false);
  });

  it('moves a queued line with Alt+↑/↓ on it: one reorder of the whole queued group, the focus kept', async () => {
    const store = new ConveyorStore();
    const queued = [line('a', 'queued', { priority: 3 }), line('b', 'queued', { priority: 0 }), line('c', 'queued', { priority: 1 })];
    api.lines.mockResolvedValue([...queued, line('r', 'running')]);
    await store.loadLines();
    render(Lines, { store });
    await flush();
    const grips = screen.getAllByTestId('line-grip');
    expect(grips.map((g) => g.dataset.lineId)).toEqual(['a', 'c', 'b']);
    // Each grip says what it does, in the interface's language.
    expect(grips[0].getAttribute('aria-label')).toBe('Переставить «line a» в очереди: перетащите или нажмите Alt+↑ / Alt+↓');
    api.reorder.mockResolvedValue([queued[2], queued[0], queued[1]]);
    grips[1].focus();
    await fireEvent.keyDown(grips[1], { key: 'ArrowUp', code: 'ArrowUp', altKey: true });
    await flush();
    expect(api.reorder).toHaveBeenCalledWith(['c', 'a', 'b']);
    expect(document.activeElement).toBe(screen.getAllByTestId('line-grip').find((g) => g.dataset.lineId === 'c'));
    expect(screen.getByTestId('queue-announce').textContent).toBe('«line c»: теперь 1-я в очереди из 3');
    // Without Alt, or past the end, nothing is sent.
    api.reorder.mockClear();
    await fireEvent.keyDown(grips[2], { key: 'ArrowDown', code: 'ArrowDown' });
    await fireEvent.keyDown(screen.getAllByTestId('line-row')[3], { key: 'ArrowDown', code: 'ArrowDown', altKey: true });
    await flush();
    expect(api.reorder).not.toHaveBeenCalled();
    // Alt+↓ on the row itself works as on its grip.
    api.reorder.mockResolvedValue(queued);
    await fireEvent.keyDown(screen.getAllByTestId('line-row')[1], { key: 'ArrowDown', code: 'ArrowDown', altKey: true });
    await flush();
    expect(api.reorder).toHaveBeenCalledTimes(1);
  });

  it('a second Alt+↑ pressed while the first move is with the daemon moves on from there, not lost', async () => {
    const store = new ConveyorStore();
    const [a, b, c] = [line('a', 'queued', { priority: 2 }), line('b', 'queued', { priority: 1 }), line('c', 'queued', { priority: 0 })];
    api.lines.mockResolvedValue([a, b, c]);
    await store.loadLines();
    render(Lines, { store });
    await flush();
    let answer!: (v: Line[]) => void;
    api.reorder.mockImplementationOnce(() => new Promise((r) => (answer = r)));
    const grip = () => screen.getAllByTestId('line-grip').find((g) => g.dataset.lineId === 'c')!;
    await fireEvent.keyDown(grip(), { key: 'ArrowUp', altKey: true });
    await flush();
    await fireEvent.keyDown(grip(), { key: 'ArrowUp', altKey: true });
    await flush();
    expect(api.reorder).toHaveBeenCalledTimes(1);
    expect(api.reorder).toHaveBeenLastCalledWith(['a', 'c', 'b']);
    // The daemon answers the first; the list reloads in that order; the second goes from it.
    const moved = [a, { ...c, priority: 1 }, { ...b, priority: 0 }];
    api.lines.mockResolvedValue(moved);
    api.reorder.mockResolvedValueOnce([{ ...c, priority: 3 }, a, { ...b, priority: 0 }]);
    answer(moved);
    await vi.waitFor(() => expect(api.reorder).toHaveBeenCalledTimes(2));
    expect(api.reorder).toHaveBeenLastCalledWith(['c', 'a', 'b']);
  });

  it('drags a queued line by its grip with the pointer: a drop indicator, then one reorder', async () => {
    const store = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'queued', { priority: 3 }), line('b', 'queued', { priority: 2 }), line('c', 'queued')]);
    await store.loadLines();
    render(Lines, { store });
    await flush();
    // Rows 40 px high from the top.
    screen.getAllByTestId('queued-item').forEach((row, i) => {
      row.getBoundingClientRect = () => ({ top: i * 40, height: 40, bottom: i * 40 + 40, left: 0, right: 300, width: 300, x: 0, y: i * 40, toJSON: () => ({}) });
    });
    const grip = screen.getAllByTestId('line-grip')[2];
    await fireEvent.pointerDown(grip, { pointerId: 1, button: 0, clientY: 100 });
    await fireEvent.pointerMove(window, { pointerId: 1, clientY: 50 });
    await flush();
    expect(screen.getByTestId('drop-indicator').dataset.gap).toBe('1');
    expect(screen.getAllByTestId('queued-item')[2].classList.contains('lifted')).toBe(true);
    // Over the line itself: no indicator, nothing to send.
    await fireEvent.pointerMove(window, { pointerId: 1, clientY: 95 });
    await flush();
    expect(screen.queryByTestId('drop-indicator')).toBeNull();
    await fireEvent.pointerMove(window, { pointerId: 1, clientY: 5 });
    await flush();
    expect(screen.getByTestId('drop-indicator').dataset.gap).toBe('0');
    api.reorder.mockResolvedValue([]);
    await fireEvent.pointerUp(window, { pointerId: 1, clientY: 5 });
    await flush();
    expect(api.reorder).toHaveBeenCalledWith(['c', 'a', 'b']);
    expect(screen.queryByTestId('drop-indicator')).toBeNull();

    // Escape drops nothing.
    api.reorder.mockClear();
    await fireEvent.pointerDown(screen.getAllByTestId('line-grip')[0], { pointerId: 2, button: 0, clientY: 10 });
    await fireEvent.pointerMove(window, { pointerId: 2, clientY: 110 });
    await fireEvent.keyDown(window, { key: 'Escape' });
    await fireEvent.pointerUp(window, { pointerId: 2, clientY: 110 });
    await flush();
    expect(api.reorder).not.toHaveBeenCalled();
  });

  it('a reorder the daemon refuses is said above the queue', async () => {
    const store = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'queued', { priority: 3 }), line('b', 'queued')]);
    await store.loadLines();
    render(Lines, { store });
    await flush();
    api.reorder.mockRejectedValue(new IpcError('invalid_state', 'only queued lines are reordered: b (planning)', null, 'invalid_state'));
    await fireEvent.keyDown(screen.getAllByTestId('line-grip')[1], { key: 'ArrowUp', altKey: true });
    await flush();
    expect(screen.getByTestId('queue-order-error').textContent).toContain('only queued lines are reordered');
    expect(screen.getAllByTestId('line-grip').map((g) => g.dataset.lineId)).toEqual(['a', 'b']);
    expect(screen.getByTestId('queue-announce').textContent).toBe('Порядок очереди не изменён.');
  });

  it('queues several lines from the form in order, a refused one kept at its field with the reason', async () => {
    const store = new ConveyorStore();
    await store.loadProjects();
    api.createLine.mockImplementation(async (l: { title: string }) => {
      if (l.title === 'Вход') {
        throw new IpcError('daemon', 'the project already has an open line titled "Вход"', 'title', 'duplicate_title');
      }
      return line(l.title, 'queued');
    });
    render(Lines, { store });
    await flush();
    await fireEvent.click(screen.getByTestId('line-add-row'));
    await fireEvent.click(screen.getByTestId('line-add-row'));
    await flush();
    expect(screen.getAllByTestId('line-draft')).toHaveLength(3);
    const titles = screen.getAllByTestId('line-title');
    const tasks = screen.getAllByTestId('line-task');
    for (const [i, title] of ['Меню', 'Вход', 'Выход'].entries()) {
      await fireEvent.input(titles[i], { target: { value: title } });
      await fireEvent.input(tasks[i], { target: { value: `Сделать: ${title}` } });
    }
    await flush();
    expect(screen.getByTestId('line-add').textContent?.trim()).toBe('Поставить в очередь: 3');
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    await flush();
    expect(api.createLine.mock.calls.map((c) => c[0])).toEqual([
      { project_id: 'p1', title: 'Меню', task: 'Сделать: Меню', priority: 0 },
      { project_id: 'p1', title: 'Вход', task: 'Сделать: Вход', priority: 0 },
      { project_id: 'p1', title: 'Выход', task: 'Сделать: Выход', priority: 0 },
    ]);
    // Only the refused row stays, its title marked and the reason worded beside it.
    const rows = screen.getAllByTestId('line-draft');
    expect(rows.map((r) => r.dataset.refused)).toEqual(['duplicate_title']);
    const title = screen.getByTestId('line-title') as HTMLInputElement;
    expect(title.value).toBe('Вход');
    expect(title.closest('label')?.classList.contains('bad')).toBe(true);
    const reason = screen.getByTestId('line-title-error');
    expect(reason.firstChild?.textContent).toBe('В проекте уже есть открытая линия с таким названием: поменяйте её приоритет или отмените её.');
    expect(reason.querySelector('.raw')?.textContent).toContain('Вход');
    expect(screen.getByTestId('line-add-refused').textContent).toContain('В очереди: 2');
    expect(screen.getByTestId('line-add-refused').textContent).toContain('Не поставлены: 1');

    // Renamed and sent again: in, and the form is one empty row.
    api.createLine.mockClear();
    await fireEvent.input(title, { target: { value: 'Вход по паролю' } });
    await fireEvent.click(screen.getByTestId('line-add'));
    await flush();
    expect(api.createLine).toHaveBeenCalledTimes(1);
    expect(screen.getAllByTestId('line-draft')).toHaveLength(1);
    expect((screen.getByTestId('line-title') as HTMLInputElement).value).toBe('');
    expect(screen.queryByTestId('line-title-error')).toBeNull();
    expect(screen.getByTestId('line-added').textContent).toBe('Линия в очереди');
  });

  it('a row is removed from the form, and a row with a task but no title holds the form back', async () => {
    const store = new ConveyorStore();
    await store.loadProjects();
    render(Lines, { store });
    await flush();
    await fireEvent.click(screen.getByTestId('line-add-row'));
    await flush();
    await fireEvent.input(screen.getAllByTestId('line-title')[0], { target: { value: 'one' } });
    await fireEvent.input(screen.getAllByTestId('line-task')[1], { target: { value: 'a task with no title' } });
    await flush();
    expect((screen.getByTestId('line-add') as HTMLButtonElement).disabled).toBe(true);
    const remove = screen.getAllByTestId('line-draft-remove');
    expect(remove[1].getAttribute('aria-label')).toBe('Убрать линию 2 из формы');
    await fireEvent.click(remove[1]);
    await flush();
    expect(screen.getAllByTestId('line-draft')).toHaveLength(1);
    expect((screen.getByTestId('line-add') as HTMLButtonElement).disabled).toBe(false);
  });

  it('shows the budget per pool, and the running steps by their line titles', async () => {
    const store = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'running', { title: 'Checkout page' })]);
    api.budget.mockResolvedValue(
      budget({
        pools: [budgetPool({ resets_at: '2026-11-30T02:00:00Z' })],
        running_estimate_usd: 1.2,
        running: [runningStep({ line_id: 'a' }), runningStep({ line_id: '3f2a9c1e-7b4d-4e8a-9f00-1234567890ab', step_n: 1 })],
        misses: { total: 4, recent: 3, advice: 'steps too large: cut them finer' },
      }),
    );
    await Promise.all([store.loadLines(), store.loadBudget()]);
    render(Lines, { store });
    const pool = screen.getByTestId('budget-pool');
    expect(pool.dataset.kind).toBe('window');
    expect(pool.textContent).toContain('$1.50 из $10.00');
    expect(screen.getByTestId('budget-panel').textContent).toContain('cut them finer');
    // A line the page has is named by its title; one it does not, by a short id.
    const running = screen.getAllByTestId('budget-running-step').map((r) => r.textContent);
    expect(running[0]).toContain('Checkout page');
    expect(running[1]).toContain('3f2a9c1e');
    expect(running[1]).not.toContain('7b4d');
  });
});

describe('Lines page: reasons by their code', () => {
  it('words the reason code in the interface language, the daemon text beneath', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'queued', { reason_code: 'preflight', reason: 'waiting: claude is not logged in' });
    api.lines.mockResolvedValue([l]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    await store.loadLines();
    await store.select('a');
    render(Lines, { store });
    await flush();
    const text = screen.getByTestId('line-reason-text');
    expect(text.dataset.code).toBe('preflight');
    expect(text.textContent).toContain('проверка перед запуском не пройдена');
    expect(text.textContent).not.toContain('claude is not logged in');
    expect(screen.getByTestId('line-reason-raw').textContent).toBe('waiting: claude is not logged in');
    i18n.lang = 'en';
    await flush();
    expect(screen.getByTestId('line-reason-text').textContent).toContain('the preflight blocks');
  });

  it('a refusal with the daemon code is worded by it, the daemon text beneath', async () => {
    const store = new ConveyorStore();
    const l = line('a', 'awaiting_acceptance');
    api.lines.mockResolvedValue([l]);
    api.line.mockResolvedValue(detailOf(l));
    api.diff.mockResolvedValue(diff);
    api.cancel.mockRejectedValue(new IpcError('daemon', 'no line a', null, 'not_found'));
    await store.loadLines();
    await store.select('a');
    render(Lines, { store });
    await fireEvent.click(screen.getByTestId('cancel-button'));
    await flush();
    const error = screen.getByTestId('line-error');
    expect(error.firstChild?.textContent).toContain('Демон этого не знает');
    expect(error.querySelector('.raw')?.textContent).toBe('no line a');
  });
});

describe('Lines page: the preflight banner', () => {
  const banner = () => screen.queryByTestId('preflight-banner');

  it('is hidden while nothing blocks, warnings included', async () => {
    const store = new ConveyorStore();
    api.preflight.mockResolvedValue(
      preflight([preflightItem(), preflightItem({ code: 'root_guard', level: 'warning', message: 'agents run as root', fix: 'set root_mode' })]),
    );
    render(Lines, { store });
    await flush();
    expect(api.preflight).toHaveBeenCalled();
    expect(store.preflight?.items).toHaveLength(2);
    expect(banner()).toBeNull();
  });

  it('names what blocks, with its fix, daemon items first and project items by project name', async () => {
    const store = new ConveyorStore();
    const dirty = preflightItem({
      code: 'clean_checkout',
      level: 'blocking',
      scope: 'project',
      project_id: 'p1',
      message: 'uncommitted changes in /srv/shop',
      fix: 'commit or stash them',
    });
    api.preflight.mockResolvedValue(preflight([preflightItem(), dirty, notLoggedIn]));
    const onSettings = vi.fn();
    render(Lines, { store, onSettings });
    await flush();
    const b = banner();
    expect(b).not.toBeNull();
    const items = screen.getAllByTestId('preflight-item');
    expect(items.map((i) => [i.dataset.code, i.dataset.level])).toEqual([
      ['agent_login', 'blocking'],
      ['clean_checkout', 'blocking'],
    ]);
    expect(items[0].textContent).toContain('Вход агента в аккаунт');
    expect(items[0].querySelector('[data-testid=preflight-message]')?.textContent).toBe(notLoggedIn.message);
    expect(items[0].querySelector('[data-testid=preflight-fix]')?.textContent).toContain('claude auth login');
    expect(items[1].textContent).toContain('проект «shop»');
    await fireEvent.click(screen.getByTestId('preflight-open-settings'));
    expect(onSettings).toHaveBeenCalledTimes(1);
  });

  it('says loudly, in its own words from the catalogue, that the sandbox is off, though nothing blocks', async () => {
    const store = new ConveyorStore();
    const off = preflightItem({
      code: 'sandbox',
      level: 'warning',
      message: 'the sandbox is off ([sandbox] mode = "off"): agents run without bubblewrap',
      fix: 'set [sandbox] mode = "required" in /etc/conveyor/conveyor.toml',
    });
    api.preflight.mockResolvedValue(preflight([preflightItem(), off]));
    render(Lines, { store });
    await flush();
    const b = banner();
    expect(b).not.toBeNull();
    expect(b?.getAttribute('role')).toBe('alert');
    const said = screen.getByTestId('preflight-sandbox-off');
    expect(said.textContent).toContain('Песочница выключена: агенты работают без bubblewrap');
    expect(said.textContent).toContain('Что сделать: поставьте [sandbox] mode = "required"');
    // Worded by the code, not the daemon's text; and no list of what blocks, since nothing does.
    expect(said.textContent).not.toContain(off.message);
    expect(screen.queryAllByTestId('preflight-item')).toHaveLength(0);
    expect(b?.textContent).not.toContain('Шаги не запускаются');
    i18n.lang = 'en';
    await flush();
    expect(screen.getByTestId('preflight-sandbox-off').textContent).toContain('The sandbox is off: agents run without bubblewrap');
  });

  it('says the sandbox is off above what blocks, and a blocking sandbox item is listed like any other', async () => {
    const store = new ConveyorStore();
    const off = preflightItem({ code: 'sandbox', level: 'warning', message: 'off', fix: 'turn it on' });
    api.preflight.mockResolvedValue(preflight([off, notLoggedIn]));
    render(Lines, { store });
    await flush();
    expect(screen.getByTestId('preflight-sandbox-off')).not.toBeNull();
    expect(screen.getAllByTestId('preflight-item').map((i) => i.dataset.code)).toEqual(['agent_login']);
    cleanup();

    const store2 = new ConveyorStore();
    const missing = preflightItem({
      code: 'sandbox',
      level: 'blocking',
      message: 'bubblewrap is missing: bwrap is not found',
      fix: 'install bubblewrap: `apt install bubblewrap`',
    });
    api.preflight.mockResolvedValue(preflight([missing]));
    render(Lines, { store: store2 });
    await flush();
    expect(screen.queryByTestId('preflight-sandbox-off')).toBeNull();
    const [item] = screen.getAllByTestId('preflight-item');
    expect(item.dataset.code).toBe('sandbox');
    expect(item.textContent).toContain('Песочница агентов (bubblewrap)');
    expect(item.querySelector('[data-testid=preflight-fix]')?.textContent).toContain('apt install bubblewrap');
  });

  it('follows the preflight: shown when it blocks, gone after the resync that finds it fixed', async () => {
    const store = new ConveyorStore();
    api.preflight.mockResolvedValue(preflight([notLoggedIn]));
    render(Lines, { store });
    await flush();
    expect(banner()).not.toBeNull();
    api.preflight.mockResolvedValue(preflight([{ ...notLoggedIn, level: 'ok', fix: null }]));
    store.onResync();
    await store.flush();
    await flush();
    expect(banner()).toBeNull();
  });
});

describe('Review page', () => {
  afterEach(() => vi.unstubAllEnvs());

  /** The morning page of project p1 with `over` in its block. */
  const page = (over: Parameters<typeof reviewProject>[0], top: Parameters<typeof reviewOf>[1] = {}) =>
    reviewOf([reviewProject(over)], top);

  it('shows a question with its kind, the judge\'s reason and options on buttons, and sends the one pressed', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(
      page({
        questions: [question({ kind: 'fork', verdict_why: 'both ports are taken in production' })],
        decided: [decision({ id: 'journal-9', source: 'agent', text: 'Kept the old API', why: null })],
      }),
    );
    api.answer.mockResolvedValue(question({ status: 'answered', answer: '9090' }));
    await store.loadReview();
    render(Review, { store });
    const block = screen.getByTestId('review-project');
    expect(block.dataset.projectId).toBe('p1');
    const q = screen.getByTestId('question');
    expect([q.dataset.status, q.dataset.kind, q.dataset.urgent]).toEqual(['validated', 'fork', 'false']);
    expect(screen.getByTestId('question-kind').textContent).toBe('развилка');
    const verdict = screen.getByTestId('question-verdict');
    expect(verdict.dataset.by).toBe('judge');
    expect(verdict.textContent).toContain('Судья: both ports are taken in production');
    expect(screen.getByTestId('review-questions').contains(q)).toBe(true);
    expect(screen.queryByTestId('review-later')).toBeNull();
    const buttons = screen.getAllByTestId('option-button');
    expect(buttons.map((b) => b.tagName)).toEqual(['BUTTON', 'BUTTON']);
    expect(buttons.map((b) => b.dataset.option)).toEqual(['8080', '9090']);
    expect((screen.getByTestId('decided-list') as HTMLDetailsElement).open).toBe(false);
    expect(screen.getByTestId('decided-entry').textContent).toContain('Kept the old API');

    api.review.mockResolvedValue(reviewOf());
    await fireEvent.click(buttons[1]);
    await flush();
    expect(api.answer).toHaveBeenCalledWith('q1', { option: '9090' });
    const answered = screen.getByTestId('question');
    expect(answered.dataset.status).toBe('answered');
    expect(answered.textContent).toContain('Ответ: 9090');
    expect(screen.queryAllByTestId('option-button')).toHaveLength(0);
  });

  it('shows the questions the daemon knows as answered, after a restart too', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(page({ answered: [question({ status: 'answered', answer: '8080' })] }));
    await store.loadReview();
    render(Review, { store });
    const q = screen.getByTestId('question');
    expect(q.dataset.status).toBe('answered');
    expect(screen.getByTestId('review-answered').contains(q)).toBe(true);
    expect(q.textContent).toContain('Ответ: 8080');
    expect(screen.queryAllByTestId('option-button')).toHaveLength(0);
  });

  it('sends a free-text answer', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(page({ questions: [question()] }));
    api.answer.mockResolvedValue(question({ status: 'answered', answer: 'use 7070' }));
    await store.loadReview();
    render(Review, { store });
    await fireEvent.input(screen.getByTestId('answer-text'), { target: { value: ' use 7070 ' } });
    await fireEvent.click(screen.getByTestId('answer-send'));
    await flush();
    expect(api.answer).toHaveBeenCalledWith('q1', { text: 'use 7070' });
  });

  it('says when the list was frozen, in the user\'s time zone and language, and what the judge still has', async () => {
    vi.stubEnv('TZ', 'Europe/Moscow');
    const store = new ConveyorStore();
    api.review.mockResolvedValue(
      page({ questions: [question()] }, { frozen_at: '2026-12-02T05:00:00Z', pending_judgement: 3, in_rework: 1 }),
    );
    await store.loadReview();
    render(Review, { store });
    const freeze = screen.getByTestId('review-freeze');
    expect(freeze.dataset.state).toBe('frozen');
    expect(freeze.dataset.frozenAt).toBe('2026-12-02T05:00:00Z');
    expect(freeze.textContent).toContain('Список заморожен в 08:00 · 2 дек');
    const pending = screen.getByTestId('review-pending');
    const rework = screen.getByTestId('review-in-rework');
    expect([pending.dataset.count, rework.dataset.count]).toEqual(['3', '1']);
    expect(pending.textContent).toBe('ещё судит судья: 3');
    expect(rework.textContent).toBe('отправлено на доработку: 1');
    expect(pending.classList.contains('zero')).toBe(false);

    i18n.lang = 'en';
    await flush();
    expect(screen.getByTestId('review-freeze').textContent).toContain('Frozen at 8:00 AM · Dec 2');
    expect(screen.getByTestId('review-pending').textContent).toBe('still being judged: 3');
    expect(screen.getByTestId('review-in-rework').textContent).toBe('sent back for rework: 1');
  });

  it('a live list (the night, or no night configured) says so; zero counts stay, muted', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(reviewOf());
    await store.loadReview();
    render(Review, { store });
    const freeze = screen.getByTestId('review-freeze');
    expect(freeze.dataset.state).toBe('live');
    expect(freeze.textContent).toContain('Список живой');
    const pending = screen.getByTestId('review-pending');
    expect(pending.dataset.count).toBe('0');
    expect(pending.classList.contains('zero')).toBe(true);
    expect(screen.getByText('Вопросов к вам нет.')).toBeTruthy();
  });

  it('keeps what was validated after the freeze apart, under its own heading, the urgent first and marked', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(
      page(
        {
          questions: [question()],
          later: [
            question({ id: 'q2', text: 'Rename the table?', validated_at: '2026-12-02T10:00:00Z' }),
            question({ id: 'q3', text: 'Drop the old backups?', reversible: false, expensive: true, urgent: true, validated_at: '2026-12-02T11:00:00Z' }),
          ],
        },
        { frozen_at: '2026-12-02T05:00:00Z' },
      ),
    );
    await store.loadReview();
    render(Review, { store });
    const ids = (el: HTMLElement) => [...el.querySelectorAll<HTMLElement>('[data-testid=question]')].map((q) => q.dataset.questionId);
    expect(ids(screen.getByTestId('review-questions'))).toEqual(['q1']);
    const later = screen.getByTestId('review-later');
    expect(later.dataset.count).toBe('2');
    expect(later.querySelector('h4')?.textContent).toBe('Подтверждено после заморозки: 2');
    expect(ids(later)).toEqual(['q3', 'q2']);
    const [urgent, plain] = [...later.querySelectorAll<HTMLElement>('[data-testid=question]')];
    expect(urgent.dataset.urgent).toBe('true');
    expect(urgent.querySelector('[data-testid=question-urgent]')?.textContent).toBe('срочно');
    expect(plain.querySelector('[data-testid=question-urgent]')).toBeNull();
    // Later questions are answered like the others.
    expect(urgent.querySelectorAll('[data-testid=option-button]')).toHaveLength(2);
  });

  it('lists what was decided without Anton collapsed; each entry says who decided and, opened, why', async () => {
    const store = new ConveyorStore();
    api.lines.mockResolvedValue([plainLine('a', 'running', { title: 'Checkout' })]);
    api.review.mockResolvedValue(
      page({
        decided: [
          decision(),
          decision({ id: 'journal-3', source: 'agent', text: 'notes are plain text', why: 'simplest', question_id: null, options: [], default: null }),
          decision({ id: 'q8', question_id: 'q8', source: 'daemon', text: 'Bump the minor version?', why: 'written by day and reversible' }),
        ],
      }),
    );
    render(Review, { store });
    await flush();
    const list = screen.getByTestId('decided-list') as HTMLDetailsElement;
    expect(list.open).toBe(false);
    expect(list.dataset.count).toBe('3');
    expect(screen.getByTestId('decided-summary').textContent).toBe('Решено без вас: 3');
    const entries = screen.getAllByTestId('decided-entry') as HTMLDetailsElement[];
    expect(entries.map((e) => [e.dataset.decisionId, e.dataset.source])).toEqual([
      ['q7', 'judge'],
      ['journal-3', 'agent'],
      ['q8', 'daemon'],
    ]);
    expect(entries.every((e) => !e.open)).toBe(true);
    const part = (e: HTMLElement, id: string) => e.querySelector(`[data-testid=${id}]`)?.textContent;
    expect(part(entries[0], 'decided-text')).toBe('Keep the old API?');
    expect(entries.map((e) => part(e, 'decided-source'))).toEqual(['решил: судья', 'решил: агент', 'решил: конвейер']);
    list.open = true;
    entries[1].open = true;
    await flush();
    expect(part(entries[1], 'decided-why')).toBe('Почему: simplest');
    expect(entries[1].textContent).toContain('Линия: Checkout');
    // Only a fork or question decided by default can be answered; the agent's own line cannot.
    expect(entries.map((e) => e.querySelector('[data-testid=decided-answer-anyway]') !== null)).toEqual([true, false, true]);

    i18n.lang = 'en';
    await flush();
    expect(screen.getByTestId('decided-summary').textContent).toBe('Decided without you: 3');
    expect(part(entries[0], 'decided-source')).toBe('decided by the judge');
  });

  it('a decided entry answered anyway: the answer goes under its id, and it shows answered', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(page({ decided: [decision()] }));
    api.answer.mockResolvedValue(question({ id: 'q7', text: 'Keep the old API?', status: 'answered', answer: 'no, drop it' }));
    await store.loadReview();
    render(Review, { store });
    const entry = screen.getByTestId('decided-entry') as HTMLDetailsElement;
    entry.open = true;
    expect(screen.queryByTestId('decided-answer-text')).toBeNull();
    await fireEvent.click(screen.getByTestId('decided-answer-anyway'));
    await flush();
    // Its options are buttons too, the default marked.
    const options = screen.getAllByTestId('decided-option');
    expect(options.map((b) => [b.dataset.option, b.classList.contains('default')])).toEqual([
      ['keep', true],
      ['drop', false],
    ]);
    const send = screen.getByTestId('decided-answer-send') as HTMLButtonElement;
    expect(send.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId('decided-answer-text'), { target: { value: ' no, drop it ' } });
    api.review.mockResolvedValue(page({ answered: [question({ id: 'q7', text: 'Keep the old API?', status: 'answered', answer: 'no, drop it' })] }));
    await fireEvent.click(send);
    await flush();
    expect(api.answer).toHaveBeenCalledWith('q7', { text: 'no, drop it' });
    const q = screen.getByTestId('question');
    expect([q.dataset.questionId, q.dataset.status]).toEqual(['q7', 'answered']);
    expect(q.textContent).toContain('Ответ: no, drop it');
    expect(screen.queryAllByTestId('decided-entry')).toHaveLength(0);
    expect(screen.getByTestId('decided-summary').textContent).toBe('Решено без вас: 0');
  });

  it('an answer the daemon refuses (still being judged, a duplicate) is worded on its card', async () => {
    const store = new ConveyorStore();
    api.review.mockResolvedValue(page({ questions: [question()] }));
    api.answer.mockRejectedValue(
      new IpcError('daemon', 'question q1: the question repeats q0: answer that one', null, 'invalid_state'),
    );
    await store.loadReview();
    render(Review, { store });
    await fireEvent.click(screen.getAllByTestId('option-button')[0]);
    await flush();
    const error = screen.getByTestId('answer-error');
    expect(error.dataset.code).toBe('daemon');
    expect(error.textContent).toContain('Сейчас это сделать нельзя');
    expect(error.querySelector('.raw')?.textContent).toContain('answer that one');
    expect(screen.getByTestId('question').dataset.status).toBe('validated');
  });
});

describe('Conveyor settings', () => {
  const view = { mode: 'embedded' as const, url: null, token_set: false, token_store: null, embedded_config: '/cfg/conveyor.toml', embedded_data: '/data/conveyor' };

  it('shows the embedded daemon files and connects a remote one with URL and token', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue(view);
    api.connect.mockResolvedValue({ mode: 'remote', url: 'http://srv:8790', state: 'connected', message: null, daemon_version: '0.1.0' });
    api.lines.mockResolvedValue([]);
    api.review.mockResolvedValue(reviewOf());
    api.budget.mockRejectedValue(new IpcError('daemon', 'x', null));
    render(ConveyorSettings, { store });
    await flush();
    expect(screen.getByTestId('conveyor-settings').textContent).toContain('/cfg/conveyor.toml');
    await fireEvent.click(screen.getByTestId('conveyor-mode-remote'));
    await flush();
    await fireEvent.input(screen.getByTestId('conveyor-url'), { target: { value: 'http://srv:8790' } });
    await fireEvent.input(screen.getByTestId('conveyor-token'), { target: { value: 'secret' } });
    expect((screen.getByTestId('conveyor-token') as HTMLInputElement).type).toBe('password');
    await fireEvent.click(screen.getByTestId('conveyor-connect'));
    await flush();
    expect(api.connect).toHaveBeenCalledWith({ mode: 'remote', url: 'http://srv:8790', token: 'secret' });
    expect(screen.getByTestId('conveyor-connection-message').textContent).toContain('Подключено: http://srv:8790');
  });

  it('tells a wrong token, an unreachable daemon and a version mismatch apart', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue({ ...view, mode: 'remote', url: 'http://srv:8790', token_set: true, token_store: 'keyring' });
    render(ConveyorSettings, { store });
    await flush();
    expect((screen.getByTestId('conveyor-token') as HTMLInputElement).placeholder).toContain('токен сохранён');
    const message = () => screen.getByTestId('conveyor-connection-message').textContent ?? '';
    const texts: string[] = [];
    for (const state of ['unauthorized', 'unreachable', 'version_mismatch'] as const) {
      api.connect.mockResolvedValue({ mode: 'remote', url: 'http://srv:8790', state, message: `because ${state}`, daemon_version: null });
      await fireEvent.click(screen.getByTestId('conveyor-connect'));
      await flush();
      texts.push(message());
    }
    // An empty token field keeps the stored token.
    expect(api.connect).toHaveBeenLastCalledWith({ mode: 'remote', url: 'http://srv:8790', token: null });
    expect(texts[0]).toContain('401');
    expect(texts[1]).toContain('недоступен');
    expect(texts[2]).toContain('Версия демона');
    expect(new Set(texts).size).toBe(3);
  });

  it('Check runs the preflight and lists its items, the blocking first, each with level and fix', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue(view);
    api.preflight.mockResolvedValue(
      preflight([
        preflightItem(),
        preflightItem({ code: 'root_guard', level: 'warning', message: 'agents run as root', fix: 'set root_mode' }),
        notLoggedIn,
      ]),
    );
    render(ConveyorSettings, { store });
    await flush();
    expect(screen.queryAllByTestId('preflight-item')).toHaveLength(0);
    await fireEvent.click(screen.getByTestId('preflight-check'));
    await flush();
    expect(api.preflight).toHaveBeenCalledTimes(1);
    const items = screen.getAllByTestId('preflight-item');
    expect(items.map((i) => [i.dataset.code, i.dataset.level])).toEqual([
      ['agent_login', 'blocking'],
      ['root_guard', 'warning'],
      ['git', 'ok'],
    ]);
    expect(items[0].textContent).toContain('блокирует');
    expect(items[0].textContent).toContain('Что сделать: run `claude auth login`');
    expect(items[1].textContent).toContain('предупреждение');
    // An ok item has nothing to do.
    expect(items[2].querySelector('[data-testid=preflight-fix]')).toBeNull();
    expect(screen.queryByTestId('preflight-all-ok')).toBeNull();

    // Fixed: Check again and the list says so.
    api.preflight.mockResolvedValue(preflight([preflightItem(), { ...notLoggedIn, level: 'ok', message: 'logged in (api key)' }]));
    await fireEvent.click(screen.getByTestId('preflight-check'));
    await flush();
    expect(screen.getAllByTestId('preflight-item').map((i) => i.dataset.level)).toEqual(['ok', 'ok']);
    expect(screen.getByTestId('preflight-all-ok')).toBeTruthy();
  });

  it('a failed Check says why, worded', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue(view);
    api.preflight.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
    render(ConveyorSettings, { store });
    await flush();
    await fireEvent.click(screen.getByTestId('preflight-check'));
    await flush();
    expect(screen.getByTestId('preflight-error').textContent).toContain('Конвейер не подключён');
  });

  const connectedStore = async () => {
    const store = new ConveyorStore();
    store.status = { mode: 'embedded', url: 'http://127.0.0.1:1', state: 'connected', message: null, daemon_version: '0.1.0' };
    api.connection.mockResolvedValue(view);
    return store;
  };

  it('shows the Catcher and PlanFix, the counts and every message with what is known of it', async () => {
    const store = await connectedStore();
    store.lines = [line('a', 'awaiting_acceptance', { title: 'Login button' })];
    api.outbox.mockResolvedValue(
      outboxOf(
        [
          outboxItem({ id: 3, kind: 'ready', state: 'pending', attempts: 2, sent_at: null, next_at: '2026-12-02T09:10:00Z', last_error: 'Too Many Requests: retry after 5', line_id: 'a', preview: 'Ready to accept: Login button' }),
          outboxItem({ id: 4, kind: 'question', state: 'pending', attempts: 0, sent_at: null, held: true, preview: 'Drop the old table?' }),
          outboxItem({ id: 2, channel: 'planfix', kind: 'report', state: 'failed', attempts: 5, sent_at: null, last_error: 'task 9 not found', preview: '#9' }),
          outboxItem(),
        ],
        { planfix: { configured: true, target: 'https://pf.example.com' } },
      ),
    );
    render(ConveyorSettings, { store });
    await flush();
    expect(api.outbox).toHaveBeenCalled();
    const panel = screen.getByTestId('outbox');
    expect(panel.querySelector('h3')?.textContent).toBe('Кэтчер и ПланФикс');
    const channels = screen.getAllByTestId('outbox-channel');
    expect(channels.map((c) => [c.dataset.channel, c.dataset.configured, c.textContent?.trim()])).toEqual([
      ['telegram', 'true', 'Кэтчер (Telegram): настроен, чат 42'],
      ['planfix', 'true', 'ПланФикс: настроен, https://pf.example.com'],
    ]);
    expect(screen.getByTestId('outbox-counts').textContent?.trim()).toBe('ждут отправки: 2 · отправлено: 1 · не доставлено: 1');

    const items = screen.getAllByTestId('outbox-item');
    expect(items.map((i) => [i.dataset.id, i.dataset.kind, i.dataset.channel, i.dataset.state])).toEqual([
      ['3', 'ready', 'telegram', 'pending'],
      ['4', 'question', 'telegram', 'pending'],
      ['2', 'report', 'planfix', 'failed'],
      ['1', 'test', 'telegram', 'sent'],
    ]);
    const [retry, held, failed, sent] = items;
    expect(retry.textContent).toContain('ждёт отправки');
    expect(retry.textContent).toContain('готова к приёмке');
    expect(retry.textContent).toContain('линия «Login button»');
    expect(retry.querySelector('[data-testid=outbox-item-preview]')?.textContent).toBe('Ready to accept: Login button');
    expect(retry.querySelector('[data-testid=outbox-item-facts]')?.textContent).toContain('попыток: 2');
    expect(retry.querySelector('[data-testid=outbox-item-facts]')?.textContent).toContain('следующая попытка');
    expect(retry.querySelector('[data-testid=outbox-item-error]')?.textContent).toBe('Ошибка: Too Many Requests: retry after 5');
    expect(held.dataset.held).toBe('true');
    expect(held.querySelector('[data-testid=outbox-item-facts]')?.textContent).toContain('ночной, в утреннюю сводку');
    expect(held.querySelector('[data-testid=outbox-item-facts]')?.textContent).not.toContain('следующая попытка');
    expect(failed.textContent).toContain('не доставлено');
    expect(failed.textContent).toContain('отчёт в задачу');
    expect(failed.querySelector('[data-testid=outbox-item-error]')?.textContent).toContain('task 9 not found');
    expect(sent.querySelector('[data-testid=outbox-item-state]')?.textContent).toBe('отправлено');
    expect(sent.querySelector('[data-testid=outbox-item-error]')).toBeNull();

    i18n.lang = 'en';
    await flush();
    expect(panel.querySelector('h3')?.textContent).toBe('Catcher and PlanFix');
    expect(held.textContent).toContain('held for the morning digest');
    expect(screen.getByTestId('outbox-test').textContent?.trim()).toBe('Send a test message');
  });

  it('sends a test message: queued, the outbox loaded again with it', async () => {
    const store = await connectedStore();
    api.outbox.mockResolvedValue(outboxOf());
    render(ConveyorSettings, { store });
    await flush();
    expect(screen.getByTestId('outbox-empty').textContent).toBe('Сообщений ещё не было.');
    expect(screen.queryByTestId('outbox-test-hint')).toBeNull();
    const queued = outboxItem({ id: 9, state: 'pending', attempts: 0, sent_at: null, next_at: '2026-12-02T09:00:00Z' });
    api.outboxTest.mockResolvedValue(queued);
    api.outbox.mockResolvedValue(outboxOf([queued]));
    const button = screen.getByTestId('outbox-test') as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    expect(button.textContent?.trim()).toBe('Отправить тестовое сообщение');
    await fireEvent.click(button);
    await flush();
    expect(api.outboxTest).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId('outbox-test-queued').textContent).toContain('Тестовое сообщение в очереди');
    expect(screen.getAllByTestId('outbox-item').map((i) => [i.dataset.kind, i.dataset.state])).toEqual([['test', 'pending']]);

    // Sent meanwhile: the daemon's outbox event reloads it.
    api.outbox.mockResolvedValue(outboxOf([{ ...queued, state: 'sent', attempts: 1, sent_at: '2026-12-02T09:00:01Z' }]));
    store.onEvent({ seq: 2, kind: 'outbox', line_id: null, project_id: null, step_n: null, state: null, detail: null, at: 'x' });
    await store.flush();
    await flush();
    expect(screen.getByTestId('outbox-item').dataset.state).toBe('sent');
  });

  it('without the Catcher the button is disabled with a hint; a 409 that comes anyway is worded', async () => {
    const store = await connectedStore();
    api.outbox.mockResolvedValue(outboxOf([], { catcher: { configured: false, target: null } }));
    render(ConveyorSettings, { store });
    await flush();
    const channel = screen.getAllByTestId('outbox-channel')[0];
    expect([channel.dataset.channel, channel.dataset.configured]).toEqual(['telegram', 'false']);
    expect(channel.textContent).toContain('не настроен');
    const button = screen.getByTestId('outbox-test') as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    expect(screen.getByTestId('outbox-test-hint').textContent).toContain('[catcher]');

    // The daemon's config said otherwise a moment ago: the refusal is shown by its code.
    api.outbox.mockResolvedValue(outboxOf());
    await store.loadOutbox();
    await flush();
    expect(button.disabled).toBe(false);
    api.outboxTest.mockRejectedValue(
      new IpcError('daemon', 'the Catcher is not configured: add [catcher] bot_token_file and chat_id', null, 'catcher_off'),
    );
    await fireEvent.click(button);
    await flush();
    const error = screen.getByTestId('outbox-test-error');
    expect(error.firstChild?.textContent).toBe('Кэтчер не настроен: в настройках демона нет раздела [catcher].');
    expect(error.querySelector('.raw')?.textContent).toContain('bot_token_file');
    expect(screen.queryByTestId('outbox-test-queued')).toBeNull();
  });

  it('while not connected there is no outbox and nothing to send', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue(view);
    render(ConveyorSettings, { store });
    await flush();
    expect(api.outbox).not.toHaveBeenCalled();
    expect((screen.getByTestId('outbox-test') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByTestId('outbox-items')).toBeNull();
  });

  it('switching back to embedded sends no URL or token', async () => {
    const store = new ConveyorStore();
    api.connection.mockResolvedValue({ ...view, mode: 'remote', url: 'http://srv:8790', token_set: true, token_store: 'file' });
    api.connect.mockResolvedValue({ mode: 'embedded', url: null, state: 'starting', message: null, daemon_version: null });
    render(ConveyorSettings, { store });
    await flush();
    await fireEvent.click(screen.getByTestId('conveyor-mode-embedded'));
    await fireEvent.click(screen.getByTestId('conveyor-connect'));
    await flush();
    expect(api.connect).toHaveBeenCalledWith({ mode: 'embedded', url: null, token: null });
  });
});
