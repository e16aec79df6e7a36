import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { conveyorMock } from '../../test/conveyor-ipc';
import {
  budget,
  decision,
  detail,
  ev,
  line,
  notLoggedIn,
  outboxItem,
  outboxOf,
  preflight,
  preflightItem,
  project,
  question,
  reviewOf,
  reviewProject,
} from '../../test/fixtures';
import type { ConnectionStatus } from '../ipc';
import type { Line, Review } from '../generated/conveyor';

vi.mock('../ipc', async (orig) => (await import('../../test/conveyor-ipc')).mockIpc(await orig()));
const api = conveyorMock(await import('../ipc'));

const { ConveyorStore, groupLines, lineKey, overridable, questionKey } = await import('./conveyor.svelte');
const { IpcError } = await import('../ipc');
const { i18n } = await import('../i18n/index.svelte');

const connected: ConnectionStatus = {
  mode: 'embedded',
  url: 'http://127.0.0.1:1',
  state: 'connected',
  message: null,
  daemon_version: '0.1.0',
};

const review: Review = reviewOf([reviewProject({ questions: [question()] })], { pending_judgement: 2 });

describe('groupLines', () => {
  it('puts what needs Anton first, then running, queued, and the finished last', () => {
    const groups = groupLines([
      line('done', 'accepted'),
      line('q-low', 'queued', { priority: 1 }),
      line('run', 'gate'),
      line('wait', 'waiting_answer'),
      line('q-high', 'queued', { priority: 5 }),
      line('ready', 'awaiting_acceptance'),
    ]);
    expect(groups.map((g) => [g.key, g.lines.map((l) => l.id)])).toEqual([
      ['attention', ['ready', 'wait']],
      ['running', ['run']],
      ['queued', ['q-high', 'q-low']],
      ['done', ['done']],
    ]);
  });
});

describe('groupLines: the queued group', () => {
  it('is in the daemon\'s order: priority, then age, then id; an order just asked shows first', () => {
    const at = '2026-12-02T10:00:00Z';
    const lines = [
      line('q2', 'queued', { created_at: at }),
      line('q1', 'queued', { created_at: at }),
      line('old', 'queued', { created_at: '2026-12-01T10:00:00Z' }),
      line('top', 'queued', { priority: 3, created_at: at }),
    ];
    const queued = (order: string[] | null) => groupLines(lines, order).find((g) => g.key === 'queued')?.lines.map((l) => l.id);
    expect(queued(null)).toEqual(['top', 'old', 'q1', 'q2']);
    expect(queued(['q2', 'top', 'old', 'q1'])).toEqual(['q2', 'top', 'old', 'q1']);
  });
});

describe('overridable', () => {
  it('a fork or question decided by default may be answered; an agent\'s own decision may not', () => {
    expect(overridable(decision())).toBe(true);
    expect(overridable(decision({ source: 'daemon' }))).toBe(true);
    expect(overridable(decision({ id: 'journal-4', source: 'agent', question_id: null, options: [], default: null }))).toBe(false);
    expect(overridable(decision({ id: 'journal-5', source: 'daemon', text: 'conveyor: level raised', question_id: null }))).toBe(false);
  });
});

describe('ConveyorStore', () => {
  beforeEach(() => {
    vi.resetAllMocks();
    api.onStatus.mockResolvedValue(() => {});
    api.onEvent.mockResolvedValue(() => {});
    api.onResync.mockResolvedValue(() => {});
    api.status.mockResolvedValue(connected);
    api.lines.mockResolvedValue([line('a', 'running')]);
    api.projects.mockResolvedValue([project()]);
    api.review.mockResolvedValue(review);
    api.budget.mockResolvedValue(budget());
    api.notify.mockResolvedValue(undefined);
    api.preflight.mockResolvedValue(preflight([preflightItem()]));
    api.outbox.mockResolvedValue(outboxOf());
    i18n.lang = 'ru';
  });
  afterEach(() => vi.useRealTimers());

  it('has a project it just added in its list, though a load of the list asked before answers late without it', async () => {
    const s = new ConveyorStore();
    const blog = project({ id: 'p2', name: 'blog' });
    api.createProject.mockResolvedValue(blog);
    const answers: ((v: ReturnType<typeof project>[]) => void)[] = [];
    api.projects.mockImplementation(() => new Promise((r) => answers.push(r)));
    // An event's reload is under way when the project is added; the add's own reload after it.
    const event = s.loadProjects();
    const created = s.createProject({ name: 'blog', repo_path: '/srv/blog' });
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    // The form already has the project to choose.
    expect(s.projects.map((p) => p.id)).toEqual(['p2']);
    // The list asked before the add answers late, without it: older than what shows, dropped.
    answers[0]([project()]);
    await event;
    expect(s.projects.map((p) => p.id)).toEqual(['p2']);
    answers[1]([project(), blog]);
    expect(await created).toEqual(blog);
    expect(s.projects.map((p) => p.id)).toEqual(['p1', 'p2']);
  });

  it('shows an answer to an earlier load while a later one is on its way, and never one older than what shows', async () => {
    const s = new ConveyorStore();
    const answers: ((v: Review) => void)[] = [];
    api.review.mockImplementation(() => new Promise((r) => answers.push(r)));
    const first = s.loadReview();
    const second = s.loadReview();
    const third = s.loadReview();
    // The first answers while two later asks are out: shown, not starved.
    const one = reviewOf([reviewProject({ questions: [question({ id: 'q1' })] })]);
    answers[0](one);
    await first;
    expect(s.review).toEqual(one);
    // The third answers before the second: the second, older, is dropped when it comes.
    const three = reviewOf([]);
    answers[2](three);
    await third;
    answers[1](reviewOf([reviewProject({ questions: [question({ id: 'q2' })] })]));
    await second;
    expect(s.review).toEqual(three);
  });

  it('reorders the queue with one call: the new order shows at once, the daemon\'s priorities after', async () => {
    const s = new ConveyorStore();
    const lines = [line('a', 'queued', { priority: 2 }), line('b', 'queued', { priority: 1 }), line('c', 'queued')];
    api.lines.mockResolvedValue(lines);
    await s.loadLines();
    const queued = () => s.groups.find((g) => g.key === 'queued')?.lines.map((l) => l.id);
    expect(queued()).toEqual(['a', 'b', 'c']);
    let answer: (l: typeof lines) => void = () => {};
    api.reorder.mockReturnValue(new Promise((r) => (answer = r)));
    const done = s.reorder(['c', 'a', 'b']);
    expect(api.reorder).toHaveBeenCalledWith(['c', 'a', 'b']);
    expect(queued()).toEqual(['c', 'a', 'b']);
    expect(s.busy.order).toBe(true);
    const moved = [line('c', 'queued', { priority: 3 }), lines[0], lines[1]];
    api.lines.mockResolvedValue(moved);
    answer(moved);
    expect(await done).toBe(true);
    expect(s.pendingOrder).toBeNull();
    expect(queued()).toEqual(['c', 'a', 'b']);
    expect(s.lines.find((l) => l.id === 'c')?.priority).toBe(3);
  });

  it('a refused reorder goes back to the daemon\'s order, the reason kept under order', async () => {
    const s = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'queued', { priority: 1 }), line('b', 'queued')]);
    await s.loadLines();
    api.reorder.mockRejectedValue(new IpcError('invalid_state', 'only queued lines are reordered: b (running)', null, 'invalid_state'));
    expect(await s.reorder(['b', 'a'])).toBe(false);
    expect(s.groups.find((g) => g.key === 'queued')?.lines.map((l) => l.id)).toEqual(['a', 'b']);
    expect(s.error('order')?.code).toBe('invalid_state');
    expect(api.lines).toHaveBeenCalledTimes(2);
  });

  it('queues several lines one by one in order, each refusal beside its row', async () => {
    const s = new ConveyorStore();
    api.lines.mockResolvedValue([]);
    api.createLine.mockImplementation(async (l: { title: string }) => {
      if (l.title === 'b') throw new IpcError('daemon', 'already open', 'title', 'duplicate_title');
      return line(l.title, 'queued');
    });
    const drafts = ['a', 'b', 'c'].map((title, key) => ({ key, title, task: 't', planfixTask: '' }));
    const outcomes = await s.createLines(drafts, 'p1', 0);
    expect(api.createLine.mock.calls.map((c) => c[0].title)).toEqual(['a', 'b', 'c']);
    expect(outcomes.map((o) => o.error?.daemonCode ?? 'ok')).toEqual(['ok', 'duplicate_title', 'ok']);
    expect(s.busy['line-add']).toBe(false);
    expect(api.lines).toHaveBeenCalled();
  });

  it('loads everything once connected', async () => {
    const s = new ConveyorStore();
    await s.start();
    await vi.waitFor(() => expect(s.lines).toHaveLength(1));
    expect(s.connected).toBe(true);
    expect(s.projects[0].name).toBe('shop');
    expect(s.review?.projects[0].questions[0].id).toBe('q1');
    expect(s.review?.pending_judgement).toBe(2);
    expect(s.budget).not.toBeNull();
    expect(s.preflight?.items[0].code).toBe('git');
    expect(s.outbox?.catcher.configured).toBe(true);
    s.stop();
  });

  it('blocking lists what blocks, the daemon items before the projects\'', async () => {
    const s = new ConveyorStore();
    const project = preflightItem({ code: 'repository', level: 'blocking', scope: 'project', project_id: 'p1' });
    const warning = preflightItem({ code: 'root_guard', level: 'warning' });
    api.preflight.mockResolvedValue(preflight([project, preflightItem(), warning, notLoggedIn]));
    await s.loadPreflight();
    expect(s.blocking.map((i) => i.code)).toEqual(['agent_login', 'repository']);
    api.preflight.mockResolvedValue(preflight([warning]));
    await s.checkPreflight();
    expect(s.blocking).toEqual([]);
  });

  it('sandboxOff is the sandbox warning only: not another warning, not a blocking sandbox', async () => {
    const s = new ConveyorStore();
    const off = preflightItem({ code: 'sandbox', level: 'warning', message: 'off' });
    api.preflight.mockResolvedValue(preflight([preflightItem({ code: 'root_guard', level: 'warning' }), off]));
    await s.loadPreflight();
    expect(s.sandboxOff).toEqual(off);
    expect(s.blocking).toEqual([]);
    api.preflight.mockResolvedValue(preflight([{ ...off, level: 'blocking' }]));
    await s.checkPreflight();
    expect(s.sandboxOff).toBeNull();
    expect(s.blocking.map((i) => i.code)).toEqual(['sandbox']);
  });

  it('a burst of events costs one refresh, after the debounce', async () => {
    vi.useFakeTimers();
    const s = new ConveyorStore();
    s.status = connected;
    await s.loadLines();
    await s.select('a');
    api.line.mockResolvedValue(detail(line('a', 'gate')));
    api.lines.mockResolvedValue([line('a', 'gate')]);
    api.lines.mockClear();
    api.line.mockClear();
    s.onEvent(ev({ kind: 'step', line_id: 'a', step_n: 1, state: 'done' }));
    s.onEvent(ev({ kind: 'line', line_id: 'a', state: 'gate' }));
    s.onEvent(ev({ kind: 'line', line_id: 'other', state: 'running' }));
    expect(api.lines).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(200);
    expect(api.lines).toHaveBeenCalledTimes(1);
    expect(api.line).toHaveBeenCalledTimes(1);
    expect(s.lines[0].state).toBe('gate');
    expect(s.detail?.state).toBe('gate');
  });

  it('an event for another line does not reload the selected detail', async () => {
    const s = new ConveyorStore();
    await s.loadLines();
    api.line.mockResolvedValue(detail(line('a', 'running')));
    await s.select('a');
    api.line.mockClear();
    s.onEvent(ev({ kind: 'step', line_id: 'b', state: 'done' }));
    await s.flush();
    expect(api.line).not.toHaveBeenCalled();
    expect(api.lines).toHaveBeenCalled();
  });

  it('a resync after a reconnect of the event stream reloads everything', async () => {
    const s = new ConveyorStore();
    await s.loadLines();
    api.line.mockResolvedValue(detail(line('a', 'running')));
    api.diff.mockResolvedValue({ base: null, head: null, files: [] });
    await s.select('a');
    vi.clearAllMocks();
    s.onResync();
    await s.flush();
    for (const f of [api.lines, api.projects, api.review, api.budget, api.line, api.diff, api.preflight, api.outbox]) {
      expect(f).toHaveBeenCalledTimes(1);
    }
  });

  it('a preflight event reloads the preflight and the lines, and nothing else', async () => {
    const s = new ConveyorStore();
    await s.loadPreflight();
    expect(s.blocking).toEqual([]);
    vi.clearAllMocks();
    api.preflight.mockResolvedValue(preflight([notLoggedIn]));
    s.onEvent(ev({ kind: 'preflight' }));
    await s.flush();
    expect(api.preflight).toHaveBeenCalledTimes(1);
    expect(api.lines).toHaveBeenCalledTimes(1);
    for (const f of [api.review, api.budget, api.projects]) expect(f).not.toHaveBeenCalled();
    expect(s.blocking.map((i) => i.code)).toEqual(['agent_login']);
    // Other events leave the preflight alone.
    s.onEvent(ev({ kind: 'line', line_id: 'a', state: 'running' }));
    await s.flush();
    expect(api.preflight).toHaveBeenCalledTimes(1);
  });

  it('an outbox event reloads the outbox, and nothing else', async () => {
    const s = new ConveyorStore();
    await s.loadOutbox();
    expect(s.outbox?.items).toEqual([]);
    vi.clearAllMocks();
    api.outbox.mockResolvedValue(outboxOf([outboxItem()]));
    s.onEvent(ev({ kind: 'outbox' }));
    await s.flush();
    expect(api.outbox).toHaveBeenCalledTimes(1);
    for (const f of [api.lines, api.review, api.budget, api.projects, api.preflight]) expect(f).not.toHaveBeenCalled();
    expect(s.outbox?.sent).toBe(1);
    // Other events leave the outbox alone.
    s.onEvent(ev({ kind: 'line', line_id: 'a', state: 'running' }));
    await s.flush();
    expect(api.outbox).toHaveBeenCalledTimes(1);
  });

  it('a test message is sent and the outbox loaded again; a refusal is kept under outbox-test', async () => {
    const s = new ConveyorStore();
    api.outboxTest.mockResolvedValue(outboxItem({ state: 'pending' }));
    api.outbox.mockResolvedValue(outboxOf([outboxItem({ state: 'pending' })]));
    expect((await s.sendTestMessage())?.kind).toBe('test');
    expect(s.outbox?.pending).toBe(1);
    api.outboxTest.mockRejectedValue(new IpcError('daemon', 'not configured', null, 'catcher_off'));
    expect(await s.sendTestMessage()).toBeNull();
    expect(s.error('outbox-test')?.daemonCode).toBe('catcher_off');
    expect(s.busy['outbox-test']).toBe(false);
  });

  it('a line ready to accept is notified once, with its title', async () => {
    const s = new ConveyorStore();
    await s.loadLines();
    s.onEvent(ev({ kind: 'line', line_id: 'a', state: 'awaiting_acceptance' }));
    s.onEvent(ev({ kind: 'line', line_id: 'a', state: 'awaiting_acceptance' }));
    s.onEvent(ev({ kind: 'step', line_id: 'a', state: 'done' }));
    expect(api.notify).toHaveBeenCalledTimes(1);
    expect(api.notify).toHaveBeenCalledWith({ title: 'Можно принимать', body: '«line a» готова к приёмке' });
    s.stop();
  });

  it('an accept refused as unmerged is kept on the line, not thrown', async () => {
    const s = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'awaiting_acceptance')]);
    await s.loadLines();
    api.accept.mockRejectedValue(new IpcError('unmerged', 'line/a is not merged into main', null));
    await expect(s.accept('a')).resolves.toBe(false);
    expect(s.errors[lineKey('a')]?.code).toBe('unmerged');
    expect(s.busy[lineKey('a')]).toBe(false);
    expect(s.lines[0].state).toBe('awaiting_acceptance');
  });

  it('an accepted line takes its new state, and a later success clears the old error', async () => {
    const s = new ConveyorStore();
    api.lines.mockResolvedValue([line('a', 'awaiting_acceptance')]);
    await s.loadLines();
    api.accept.mockRejectedValueOnce(new IpcError('invalid_state', 'no', null));
    await s.accept('a');
    api.accept.mockResolvedValue(line('a', 'accepted'));
    api.lines.mockResolvedValue([line('a', 'accepted')]);
    await expect(s.accept('a')).resolves.toBe(true);
    expect(s.errors[lineKey('a')]).toBeUndefined();
    expect(s.lines[0].state).toBe('accepted');
  });

  it('sends remarks and the priority', async () => {
    const s = new ConveyorStore();
    await s.loadLines();
    api.remarks.mockResolvedValue(line('a', 'queued'));
    api.setPriority.mockResolvedValue(line('a', 'queued', { priority: 3 }));
    expect(await s.remarks('a', '   ')).toBe(false);
    expect(api.remarks).not.toHaveBeenCalled();
    expect(await s.remarks('a', 'rename the button')).toBe(true);
    expect(api.remarks).toHaveBeenCalledWith('a', 'rename the button');
    await s.setPriority('a', 3);
    expect(api.setPriority).toHaveBeenCalledWith('a', 3);
  });

  it('an answer goes to the daemon, is remembered as answered, and the review reloads', async () => {
    const s = new ConveyorStore();
    await s.loadReview();
    api.answer.mockResolvedValue(question({ status: 'answered', answer: '9090' }));
    api.review.mockResolvedValue(reviewOf());
    expect(await s.answer('q1', { option: '9090' })).toBe(true);
    expect(api.answer).toHaveBeenCalledWith('q1', { option: '9090' });
    expect(s.review?.projects).toEqual([]);
    expect(s.answered.map((q) => [q.id, q.answer])).toEqual([['q1', '9090']]);
  });

  it('a failed answer is kept under its question', async () => {
    const s = new ConveyorStore();
    api.answer.mockRejectedValue(new IpcError('daemon_unreachable', 'connection refused', null));
    expect(await s.answer('q1', { text: 'x' })).toBe(false);
    expect(s.errors[questionKey('q1')]?.code).toBe('daemon_unreachable');
  });

  it('filters the lines of the groups by the glance filter', () => {
    const s = new ConveyorStore();
    s.lines = [line('a', 'awaiting_acceptance'), line('b', 'planning'), line('c', 'waiting_budget'), line('d', 'blocked')];
    expect(s.groups.flatMap((g) => g.lines.map((l) => l.id))).toEqual(['a', 'd', 'c', 'b']);
    s.showLines('running');
    expect(s.groups.flatMap((g) => g.lines.map((l) => l.id))).toEqual(['c', 'b']);
    s.showLines('awaiting_acceptance');
    expect(s.groups.map((g) => [g.key, g.lines.map((l) => l.id)])).toEqual([['attention', ['a']]]);
  });

  it('an answer taken back is forgotten here and the review reloads', async () => {
    const s = new ConveyorStore();
    api.answer.mockResolvedValue(question({ status: 'answered', answer: '9090', changeable: true }));
    api.review.mockResolvedValue(reviewOf());
    await s.answer('q1', { option: '9090' });
    api.takeBack.mockResolvedValue(question());
    api.review.mockResolvedValue(review);
    expect(await s.takeBack('q1')).toBe(true);
    expect(api.takeBack).toHaveBeenCalledWith('q1');
    expect(s.answered).toEqual([]);
    expect(s.review?.projects[0].questions[0].status).toBe('validated');
  });

  it('a take-back refused because the answer step started reloads the review and marks the answer fixed', async () => {
    const s = new ConveyorStore();
    api.answer.mockResolvedValue(question({ status: 'answered', answer: '9090', changeable: true }));
    api.review.mockResolvedValue(reviewOf());
    await s.answer('q1', { option: '9090' });
    api.review.mockClear();
    api.takeBack.mockRejectedValue(new IpcError('invalid_state', 'started', null, 'answer_started'));
    expect(await s.takeBack('q1')).toBe(false);
    expect(s.errors[questionKey('q1')]?.daemonCode).toBe('answer_started');
    expect(api.review).toHaveBeenCalledTimes(1);
    expect(s.answered.map((q) => [q.id, q.changeable])).toEqual([['q1', false]]);
    // Other refusals leave the list alone.
    api.review.mockClear();
    api.takeBack.mockRejectedValue(new IpcError('daemon_unreachable', 'connection refused', null));
    expect(await s.takeBack('q1')).toBe(false);
    expect(api.review).not.toHaveBeenCalled();
  });

  it('when loads overlap, a late answer of an older one is dropped', async () => {
    const s = new ConveyorStore();
    let first: (v: Line[]) => void = () => {};
    api.lines.mockImplementationOnce(() => new Promise((r) => (first = r)));
    const older = s.loadLines();
    api.lines.mockResolvedValueOnce([line('new', 'gate')]);
    await s.loadLines();
    first([line('old', 'queued')]);
    await older;
    expect(s.lines.map((l) => l.id)).toEqual(['new']);
  });

  it('a load that fails keeps its error and the old data', async () => {
    const s = new ConveyorStore();
    await s.loadLines();
    api.lines.mockRejectedValue(new IpcError('not_connected', 'no daemon', null));
    await s.loadLines();
    expect(s.errors.lines?.code).toBe('not_connected');
    expect(s.lines).toHaveLength(1);
  });

  it('connecting keeps the status the backend reports', async () => {
    const s = new ConveyorStore();
    const refused: ConnectionStatus = { ...connected, mode: 'remote', state: 'unauthorized', message: '401' };
    api.connect.mockResolvedValue(refused);
    api.connection.mockResolvedValue({ mode: 'remote', url: 'http://h:8790', token_set: true, token_store: 'file', embedded_config: '/c', embedded_data: '/d' });
    await s.connect({ mode: 'remote', url: 'http://h:8790', token: 'bad' });
    expect(s.status?.state).toBe('unauthorized');
    expect(s.connection?.token_set).toBe(true);
    expect(api.lines).not.toHaveBeenCalled();
  });
});
