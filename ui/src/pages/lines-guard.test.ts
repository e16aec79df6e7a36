// The Lines page's guard, sandbox, deploys and decisions: what the never-autonomous guard
// stopped a line's agents from doing, what their sandbox refused them, the line's deploys (outcome, commits, output, every health try, a
// rollback marked), and a project's "decided without you" catalogue, newest first.
import { cleanup, fireEvent, render, screen, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flush } from '../test/flush';
import { conveyorMock } from '../test/conveyor-ipc';
import { decision, denial, deploy, detail, ev, line, preflight, preflightItem, project, refusal } from '../test/fixtures';
import type { Line } from '../lib/generated/conveyor';

vi.mock('../lib/ipc', async (orig) => (await import('../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../lib/ipc'));

const { ConveyorStore } = await import('../lib/stores/conveyor.svelte');
const { IpcError } = await import('../lib/ipc');
const { i18n } = await import('../lib/i18n/index.svelte');
const Lines = (await import('./Lines.svelte')).default;

const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

async function open(l: Line | null, lines: Line[] = l ? [l] : []) {
  const store = new ConveyorStore();
  store.debounceMs = 0;
  api.lines.mockResolvedValue(lines);
  if (l) api.line.mockResolvedValue(detail(l));
  await store.loadLines();
  await store.loadProjects();
  if (l) await store.select(l.id);
  render(Lines, { store });
  await flush();
  return store;
}

beforeEach(() => {
  vi.resetAllMocks();
  i18n.lang = 'ru';
  api.projects.mockResolvedValue([project(), project({ id: 'p2', name: 'blog' })]);
  api.review.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.budget.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
  api.preflight.mockResolvedValue(preflight([preflightItem()]));
  api.diff.mockResolvedValue({ base: null, head: null, files: [] });
  api.decisions.mockResolvedValue([]);
});
afterEach(() => cleanup());

describe('Lines page: what the guard stopped', () => {
  it('shows each denial: the action, its step and tool, in a labelled list', async () => {
    await open(
      line('a', 'waiting_answer', {
        denials: [
          denial(),
          denial({ tool_name: 'Write', input: { file_path: '/srv/prod/.env', content: 'x' } }),
          denial({ step_n: 3, input: { command: 'docker push registry.example/app' } }),
        ],
      }),
    );
    const section = screen.getByRole('region', { name: /Остановлено защитой/ });
    expect(section.dataset.count).toBe('3');
    const list = within(section).getByRole('list', { name: /Остановлено защитой/ });
    const items = within(list).getAllByTestId('denial');
    expect(items.map((d) => [d.dataset.step, d.dataset.tool])).toEqual([
      ['2', 'Bash'],
      ['2', 'Write'],
      ['3', 'Bash'],
    ]);
    expect(items.map((d) => squash(within(d).getByTestId('denial-text').textContent))).toEqual([
      'Защита остановила: npm publish — шаг 2',
      'Защита остановила: /srv/prod/.env — шаг 2',
      'Защита остановила: docker push registry.example/app — шаг 3',
    ]);
    expect(items[1].textContent).toContain('инструмент Write');

    i18n.lang = 'en';
    await flush();
    expect(squash(within(items[0]).getByTestId('denial-text').textContent)).toBe('The guard stopped: npm publish — step 2');
  });

  it('a long command is cut, whole in its title; no section without denials', async () => {
    const long = `npm publish ${'--tag x '.repeat(40)}`.trim();
    await open(line('a', 'running', { denials: [denial({ input: { command: long } })] }));
    const action = screen.getByTestId('denial-action');
    expect(action.title).toBe(long);
    expect(action.textContent?.endsWith('…')).toBe(true);
    cleanup();
    await open(line('a', 'running'));
    expect(screen.queryByTestId('line-denials')).toBeNull();
  });
});

describe('Lines page: what the sandbox refused', () => {
  const ref = 'refs/heads/main: 0123456 -> 89abcde';

  it('shows each refusal beside the denials: its kind in words, what, step and time', async () => {
    await open(
      line('a', 'waiting_answer', {
        denials: [denial()],
        refusals: [
          refusal(),
          refusal({ kind: 'write', what: '/home/agent/.npmrc', at: '2026-11-29T21:41:00Z' }),
          refusal({ step_n: 3, kind: 'ref', what: ref, at: '2026-11-29T21:42:00Z' }),
        ],
      }),
    );
    const section = screen.getByRole('region', { name: /Отказано песочницей/ });
    expect(section.dataset.count).toBe('3');
    // Right after what the guard stopped.
    const denials = screen.getByTestId('line-denials');
    expect(denials.compareDocumentPosition(section) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(within(section).getByText(/спросили, разрешить ли его проекту/)).toBeTruthy();
    const list = within(section).getByRole('list', { name: /Отказано песочницей/ });
    const items = within(list).getAllByTestId('refusal');
    expect(items.map((r) => [r.dataset.kind, r.dataset.step])).toEqual([
      ['host', '2'],
      ['write', '2'],
      ['ref', '3'],
    ]);
    expect(items.map((r) => squash(within(r).getByTestId('refusal-text').textContent))).toEqual([
      'Хост: registry.npmjs.org:443 — шаг 2',
      'Запись: /home/agent/.npmrc — шаг 2',
      `Ветка: ${ref} — шаг 3`,
    ]);
    expect(items.every((r) => /^в /.test(squash(r.querySelector('.facts')?.textContent)))).toBe(true);

    i18n.lang = 'en';
    await flush();
    expect(screen.getByRole('region', { name: /Refused by the sandbox/ })).toBe(section);
    expect(items.map((r) => squash(within(r).getByTestId('refusal-text').textContent))).toEqual([
      'Host: registry.npmjs.org:443 — step 2',
      'Write: /home/agent/.npmrc — step 2',
      `Ref: ${ref} — step 3`,
    ]);
    expect(squash(items[0].querySelector('.facts')?.textContent)).toMatch(/^at /);
  });

  it('a long path is cut, whole in its title; no section without refusals', async () => {
    const long = `/home/agent/${'deep/'.repeat(60)}file`;
    await open(line('a', 'running', { refusals: [refusal({ kind: 'write', what: long })] }));
    const what = screen.getByTestId('refusal-what');
    expect(what.title).toBe(long);
    expect(what.textContent?.endsWith('…')).toBe(true);
    cleanup();
    await open(line('a', 'running', { denials: [denial()] }));
    expect(screen.queryByTestId('line-refusals')).toBeNull();
  });

  it('a question event about the selected line reloads it, and its refusals show', async () => {
    const store = await open(line('a', 'running'));
    expect(screen.queryByTestId('line-refusals')).toBeNull();
    api.line.mockResolvedValue(detail(line('a', 'running', { refusals: [refusal()] })));
    store.onEvent(ev({ kind: 'question', line_id: 'a' }));
    await store.flush();
    await flush();
    expect(screen.getAllByTestId('refusal').map((r) => r.dataset.kind)).toEqual(['host']);
  });
});

describe('Lines page: deploys', () => {
  const at = (s: string) => `2026-12-01T10:0${s}Z`;
  const rolledBack = deploy({
    commit: 'aaaaaaa1111111111111111111111111111111111',
    previous_commit: 'bbbbbbb2222222222222222222222222222222222',
    started_at: at('2:00'),
    finished_at: at('4:00'),
    outcome: 'rolled_back',
    output_tail: 'deploying aaaaaaa\nrollback to bbbbbbb: done\n',
    health: [
      { at: at('2:30'), ok: false, output_tail: 'curl: (7) Failed to connect' },
      { at: at('3:00'), ok: false, output_tail: 'HTTP 502' },
    ],
  });
  const green = deploy({ health: [{ at: at('1:00'), ok: true, output_tail: 'HTTP 200' }] });

  it('shows each deploy latest first: outcome, commits, output folded, each health try', async () => {
    await open(line('a', 'rolled_back', { deploys: [green, rolledBack] }));
    const section = screen.getByRole('region', { name: 'Деплои' });
    const list = within(section).getByRole('list', { name: 'Деплои линии, последний первым' });
    const shown = within(list).getAllByTestId('deploy');
    expect(shown.map((d) => d.dataset.outcome)).toEqual(['rolled_back', 'green']);
    const [last, first] = shown;
    expect(last.getAttribute('aria-label')).toBe('Деплой 2: откачен');
    expect(within(last).getByTestId('deploy-outcome').textContent).toBe('откачен');
    const commit = within(last).getByTestId('deploy-commit');
    expect([commit.textContent, commit.title]).toEqual(['коммит aaaaaaa', rolledBack.commit]);
    expect(within(last).getByTestId('deploy-previous').textContent).toBe('предыдущий bbbbbbb');
    expect(last.textContent).toContain('занял 2 мин 0 с');

    // The rollback is marked in words, and says what production runs again.
    const marker = within(last).getByRole('status');
    expect(marker.dataset.testid).toBe('deploy-rolled-back');
    expect(marker.textContent).toBe('⟲ Откачен: на проде снова bbbbbbb');

    // The output is folded until opened.
    const output = within(last).getByTestId('deploy-output') as HTMLDetailsElement;
    expect(output.open).toBe(false);
    expect(within(output).getByText('Вывод деплоя')).toBeTruthy();
    expect(output.querySelector('pre')?.textContent).toBe(rolledBack.output_tail);

    // Every health try with its result in words and its output.
    expect(within(last).getByTestId('deploy-health-tally').textContent).toBe('Проверки здоровья: зелёных 0 из 2');
    const tries = within(last).getAllByTestId('health-try');
    expect(tries.map((t) => t.dataset.ok)).toEqual(['false', 'false']);
    expect(tries.map((t) => squash(within(t).getByTestId('health-result').textContent))).toEqual(['✗ красная', '✗ красная']);
    expect(tries.map((t) => within(t).getByTestId('health-output').textContent)).toEqual([
      'curl: (7) Failed to connect',
      'HTTP 502',
    ]);
    expect(squash(tries[0].querySelector('summary')?.textContent)).toMatch(/^Попытка 1, .+ ✗ красная$/);

    expect(first.getAttribute('aria-label')).toBe('Деплой 1: зелёный');
    expect(within(first).queryByRole('status')).toBeNull();
    expect(squash(within(first).getByTestId('health-result').textContent)).toBe('✓ зелёная');

    i18n.lang = 'en';
    await flush();
    expect(marker.textContent).toBe('⟲ Rolled back: production is at bbbbbbb again');
    expect(within(last).getByTestId('deploy-health-tally').textContent).toBe('Health checks: 0 of 2 green');
    expect(last.getAttribute('aria-label')).toBe('Deploy 2: rolled back');
  });

  it('a running deploy with no health check yet; red without a rollback says so; none, no section', async () => {
    await open(
      line('a', 'deploying', {
        deploys: [deploy({ outcome: 'red', output_tail: '' }), deploy({ outcome: 'running', finished_at: null })],
      }),
    );
    const [running, red] = screen.getAllByTestId('deploy');
    expect(running.dataset.outcome).toBe('running');
    expect(within(running).getByTestId('deploy-health-none').textContent).toBe('Проверок здоровья ещё не было.');
    expect(running.textContent).not.toContain('занял');
    expect(within(red).getByRole('status').textContent).toBe('✗ Красный, и откатывать нечем: нужен человек');
    expect(within(red).getByTestId('deploy-output').textContent).toContain('Деплой ничего не вывел.');
    cleanup();
    await open(line('a', 'running'));
    expect(screen.queryByTestId('line-deploys')).toBeNull();
  });
});

describe('Lines page: decided without you', () => {
  const catalogue = [
    decision({ id: 'journal-9', source: 'agent', text: 'Used port 8080', why: 'the README says so', question_id: null, options: [], default: null, created_at: '2026-11-30T09:00:00Z' }),
    decision({ id: 'q7', source: 'judge', text: 'Keep the old API?', why: 'nothing depends on the new one yet' }),
    decision({ id: 'q8', source: 'daemon', text: 'Bump the minor version?', why: null, line_id: 'b' }),
  ];

  it("shows the selected line's project's catalogue in the daemon's order: source, text, why, line", async () => {
    api.decisions.mockResolvedValue(catalogue);
    await open(line('a', 'running'), [line('a', 'running'), line('b', 'accepted', { title: 'old line' })]);
    expect(api.decisions).toHaveBeenCalledWith('p1', 200);
    const section = screen.getByTestId('project-decisions');
    expect(section.dataset.project).toBe('p1');
    const list = within(section).getByRole('list', { name: 'Решения проекта shop' });
    const items = within(list).getAllByTestId('decision');
    expect(items.map((d) => [d.dataset.decisionId, d.dataset.source])).toEqual([
      ['journal-9', 'agent'],
      ['q7', 'judge'],
      ['q8', 'daemon'],
    ]);
    expect(items.map((d) => within(d).getByTestId('decision-source').textContent)).toEqual(['агент', 'судья', 'конвейер']);
    expect(within(items[0]).getByTestId('decision-text').textContent).toBe('Used port 8080');
    expect(within(items[0]).getByTestId('decision-why').textContent).toBe('Почему: the README says so');
    expect(within(items[2]).queryByTestId('decision-why')).toBeNull();
    expect(within(items[2]).getByTestId('decision-line').textContent?.trim()).toBe('Линия: old line');
    expect(within(section).getByTestId('decisions-count').textContent).toBe('3');

    // The line's link opens it.
    api.line.mockResolvedValue(detail(line('b', 'accepted', { title: 'old line' })));
    await fireEvent.click(within(items[2]).getByTestId('decision-line'));
    await flush();
    expect(screen.getByTestId('line-detail').dataset.lineId).toBe('b');
  });

  it("another project is picked from the list; its empty catalogue says so", async () => {
    api.decisions.mockResolvedValue(catalogue);
    await open(null);
    expect(api.decisions).toHaveBeenLastCalledWith('p1', 200);
    api.decisions.mockResolvedValue([]);
    const select = screen.getByRole('combobox', { name: 'Решения проекта' }) as HTMLSelectElement;
    select.value = 'p2';
    await fireEvent.change(select);
    await flush();
    expect(api.decisions).toHaveBeenLastCalledWith('p2', 200);
    expect(screen.getByTestId('project-decisions').dataset.project).toBe('p2');
    expect(screen.getByTestId('decisions-empty').textContent).toBe('В этом проекте без вас ещё ничего не решено.');
  });

  it("a journal event reloads it; a failure is worded on the section", async () => {
    const store = await open(line('a', 'running'));
    expect(screen.getByTestId('decisions-empty')).toBeTruthy();
    api.decisions.mockResolvedValue([catalogue[0]]);
    store.onEvent(ev({ kind: 'journal', line_id: 'a', project_id: 'p1' }));
    await store.flush();
    await flush();
    expect(screen.getAllByTestId('decision').map((d) => d.dataset.decisionId)).toEqual(['journal-9']);

    api.decisions.mockRejectedValue(new IpcError('daemon_unreachable', 'connection refused', null));
    store.onEvent(ev({ kind: 'question', line_id: 'a' }));
    await store.flush();
    await flush();
    expect(screen.getByTestId('decisions-error')).toBeTruthy();
  });
});
