// The Lines page's chain of roles: each step with its role, the checking roles' sessions,
// agents, verdicts and findings, the line's level with why, the rounds, and raising the level.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flush } from '../test/flush';
import { conveyorMock } from '../test/conveyor-ipc';
import { detail, line, preflight, preflightItem, project, step } from '../test/fixtures';
import type { Line, Step } from '../lib/generated/conveyor';

vi.mock('../lib/ipc', async (orig) => (await import('../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../lib/ipc'));

const { ConveyorStore } = await import('../lib/stores/conveyor.svelte');
const { IpcError } = await import('../lib/ipc');
const { i18n } = await import('../lib/i18n/index.svelte');
const Lines = (await import('./Lines.svelte')).default;

const REVIEWER_1 = '3f2a9c1e-7b4d-4e8a-9f00-1234567890ab';
const REVIEWER_2 = '9b8c7d6e-0000-4e8a-9f00-1234567890ab';
const TESTER = '11112222-3333-4444-5555-666677778888';

/** The medium chain: planner, executor, tester, the project's reviewer sending it back with a
 * finding, the fixer, and the reviewer's second look running. */
const chain: Step[] = [
  step({ id: 's1', n: 1, kind: 'planner', title: 'plan' }),
  step({ id: 's2', n: 2, kind: 'executor', title: 'greet' }),
  step({ id: 's3', n: 3, kind: 'tester', title: 'test', session_id: TESTER, verdict: { verdict: 'pass', findings: [] } }),
  step({
    id: 's4',
    n: 4,
    kind: 'reviewer',
    title: 'review',
    session_id: REVIEWER_1,
    agent: 'code-reviewer',
    verdict: {
      verdict: 'rework',
      findings: [
        { path: 'hello.txt', line: 1, text: 'typo: helo should be hello' },
        { text: 'no test for the greeting' },
      ],
    },
  }),
  step({ id: 's5', n: 5, kind: 'fixer', title: 'fix what the check found' }),
  step({ id: 's6', n: 6, kind: 'reviewer', title: 'review', state: 'running', session_id: REVIEWER_2, agent: 'code-reviewer' }),
];

const fixing = (over: Partial<Line> = {}): Line =>
  line('a', 'fixing', { level: 'medium', level_why: 'the planner chose it', rounds: 2, steps: chain, ...over });

async function open(l: Line) {
  const store = new ConveyorStore();
  api.lines.mockResolvedValue([l]);
  api.line.mockResolvedValue(detail(l));
  await store.loadLines();
  await store.select(l.id);
  render(Lines, { store });
  await flush();
  return store;
}

beforeEach(() => {
  vi.resetAllMocks();
  i18n.lang = 'ru';
  api.projects.mockResolvedValue([project()]);
  api.review.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.budget.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.preflight.mockResolvedValue(preflight([preflightItem()]));
  api.diff.mockResolvedValue({ base: null, head: null, files: [] });
  api.decisions.mockResolvedValue([]);
});
afterEach(() => cleanup());

describe('Lines page: the chain of roles', () => {
  it('shows every step with its role, and the checkers with session, agent, verdict and findings', async () => {
    await open(fixing());
    const rows = screen.getAllByTestId('step-row');
    expect(rows.map((r) => r.dataset.kind)).toEqual(['planner', 'executor', 'tester', 'reviewer', 'fixer', 'reviewer']);
    expect(rows.map((r) => r.children[1].textContent)).toEqual([
      'постановщик',
      'исполнитель',
      'тестировщик',
      'ревьюер',
      'починка',
      'ревьюер',
    ]);

    // Only the checking roles have a line of their own facts.
    const roles = screen.getAllByTestId('step-role');
    expect(roles.map((r) => [r.dataset.n, r.dataset.agent, r.dataset.verdict])).toEqual([
      ['3', '', 'pass'],
      ['4', 'code-reviewer', 'rework'],
      ['6', 'code-reviewer', ''],
    ]);
    const [tester, review, second] = roles;
    expect(within(tester).getByTestId('step-agent').textContent).toBe('встроенный промпт');
    expect(within(tester).getByTestId('step-verdict').textContent).toBe('принято');
    expect(within(tester).queryAllByTestId('finding')).toHaveLength(0);

    const session = within(review).getByTestId('step-session');
    expect(session.textContent).toBe('сессия 3f2a9c1e');
    expect(session.title).toBe(REVIEWER_1);
    expect(within(review).getByTestId('step-agent').textContent).toBe('агент code-reviewer');
    expect(within(review).getByTestId('step-verdict').textContent).toBe('вернул на доработку');
    expect(within(review).getAllByTestId('finding').map((f) => f.textContent)).toEqual([
      'hello.txt:1: typo: helo should be hello',
      'no test for the greeting',
    ]);
    expect(within(review).getByRole('list', { name: 'Замечания проверяющего' })).toBeTruthy();

    expect(within(second).getByTestId('step-session').textContent).toBe('сессия 9b8c7d6e');
    expect(second.textContent).toContain('вердикта ещё нет');

    i18n.lang = 'en';
    await flush();
    expect(within(tester).getByTestId('step-agent').textContent).toBe('built-in');
    expect(within(review).getByTestId('step-verdict').textContent).toBe('rework');
    expect(within(review).getByTestId('step-session').textContent).toBe('session 3f2a9c1e');
  });

  it('a judge shows its own session, and no agent or verdict', async () => {
    await open(line('a', 'running', { steps: [step({ id: 'j', n: 3, kind: 'judge', title: 'judge', session_id: REVIEWER_1 })] }));
    const role = screen.getByTestId('step-role');
    expect(role.dataset.kind).toBe('judge');
    expect(within(role).getByTestId('step-session').textContent).toBe('сессия 3f2a9c1e');
    expect(within(role).queryByTestId('step-agent')).toBeNull();
    expect(role.textContent).not.toContain('вердикта');
  });

  it('shows the level with why, and the rounds when there are any, in the detail and the list', async () => {
    await open(fixing());
    const level = screen.getByTestId('line-level');
    expect(level.dataset.level).toBe('medium');
    expect(screen.getByTestId('line-level-name').textContent?.trim()).toBe('Уровень: средний');
    expect(screen.getByTestId('line-level-why').textContent).toBe('почему: the planner chose it');
    expect(screen.getByTestId('line-rounds').textContent?.trim()).toBe('раунд 2 из 3');
    expect(screen.getByTestId('line-row-rounds').textContent).toBe('раунд 2 из 3');
    expect(screen.getByTestId('line-row-level').textContent).toBe('средний');
    i18n.lang = 'en';
    await flush();
    expect(screen.getByTestId('line-level-name').textContent?.trim()).toBe('Level: medium');
    expect(screen.getByTestId('line-rounds').textContent?.trim()).toBe('round 2 of 3');
  });

  it('no rounds while none failed; no level before the planner chose one', async () => {
    await open(line('a', 'queued'));
    expect(screen.queryByTestId('line-rounds')).toBeNull();
    expect(screen.queryByTestId('line-row-rounds')).toBeNull();
    expect(screen.queryByTestId('line-level-why')).toBeNull();
    expect(screen.getByTestId('line-level-name').textContent).toBe('Уровень ещё не выбран');
  });
});

describe('Lines page: raising the level', () => {
  const offered = () => screen.queryAllByTestId('level-raise-to').map((b) => b.dataset.level);

  it('offers only higher levels, raises, and shows the new level with why', async () => {
    const l = line('a', 'running', { level: 'light', level_why: 'the planner chose it' });
    await open(l);
    const group = screen.getByRole('group', { name: 'Поднять уровень' });
    expect(group).toBeTruthy();
    expect(offered()).toEqual(['medium', 'full']);
    expect(screen.getByRole('button', { name: 'Поднять уровень до «средний»: исполнитель, тесты, клики и ревьюер' })).toBeTruthy();

    const raised = { ...l, level: 'medium' as const, level_why: 'Anton raised it' };
    api.raiseLevel.mockResolvedValue(raised);
    api.lines.mockResolvedValue([raised]);
    api.line.mockResolvedValue(detail(raised));
    await fireEvent.click(screen.getByRole('button', { name: /«средний»/ }));
    await flush();
    expect(api.raiseLevel).toHaveBeenCalledWith('a', 'medium');
    expect(screen.getByTestId('line-level').dataset.level).toBe('medium');
    expect(screen.getByTestId('line-level-why').textContent).toBe('почему: Anton raised it');
    expect(offered()).toEqual(['full']);
  });

  it('offers nothing at full, nor once the checks are over', async () => {
    await open(line('a', 'running', { level: 'full' }));
    expect(screen.queryByTestId('level-raise')).toBeNull();
    cleanup();
    await open(line('a', 'awaiting_acceptance', { level: 'light' }));
    expect(screen.queryByTestId('level-raise')).toBeNull();
  });

  it('a refusal stays on the line, worded by the daemon code', async () => {
    await open(line('a', 'running', { level: 'light' }));
    api.raiseLevel.mockRejectedValue(
      new IpcError('invalid_state', 'the line is full already; a level only goes up', null, 'level_lower'),
    );
    await fireEvent.click(screen.getByRole('button', { name: /«полный»/ }));
    await flush();
    const error = screen.getByTestId('line-error');
    expect(error.firstChild?.textContent).toBe('Уровень линии уже выше: уровень можно только повышать.');
    expect(error.querySelector('.raw')?.textContent).toBe('the line is full already; a level only goes up');
  });
});
