// State of the conveyor pages (Lines, Review, the budget and the connection badge): what the
// daemon last said, refreshed when its events arrive (coalesced, so a burst of events costs one
// round of requests), and the outcome of each action kept under its own key. Nothing here
// throws at the pages and nothing waits on anything else: a refused accept is a message on its
// line, not a crash, and the rest of the app goes on.
import { conveyor as api, IpcError, type ConnectRequest, type ConnectionStatus, type ConnectionView } from '../ipc';
import type {
  Answer,
  Budget,
  Decision,
  Event,
  Level,
  Line,
  LineDetail,
  LineDiff,
  LineState,
  NewLine,
  NewProject,
  Outbox,
  OutboxItem,
  Preflight,
  PreflightItem,
  Project,
  Question,
  Review,
  Run,
} from '../generated/conveyor';
import { noticeFor } from '../notify';
import { inOrder } from '../order';
import { sendInOrder, toNewLine, type Draft, type Outcome } from '../queue';

export type GroupKey = 'attention' | 'running' | 'queued' | 'done';

/** The groups of the Lines page in their order, each with its states in order. */
export const GROUPS: { key: GroupKey; states: LineState[] }[] = [
  {
    key: 'attention',
    states: ['awaiting_acceptance', 'needs_human', 'rolled_back', 'blocked', 'waiting_answer', 'waiting_budget'],
  },
  { key: 'running', states: ['planning', 'running', 'gate', 'fixing', 'merging', 'deploying'] },
  { key: 'queued', states: ['queued'] },
  { key: 'done', states: ['accepted', 'cancelled'] },
];

/** The filtered lists the morning's glance opens, each with the states it shows. `running`:
 * the states the daemon counts as running for the glance (its `line::ACTIVE`, and `deploying`), so that the
 * list holds as many lines as the glance's number says. */
export type LineFilter = 'awaiting_acceptance' | 'running' | 'waiting_answer' | 'needs_human' | 'rolled_back';

export const FILTERS: Record<LineFilter, LineState[]> = {
  awaiting_acceptance: ['awaiting_acceptance'],
  running: ['queued', 'planning', 'running', 'fixing', 'gate', 'merging', 'waiting_budget', 'deploying'],
  waiting_answer: ['waiting_answer'],
  needs_human: ['needs_human'],
  rolled_back: ['rolled_back'],
};

export const LINE_FILTERS = Object.keys(FILTERS) as LineFilter[];

/** The lines a filter shows (all of them without one). */
export function filterLines(lines: Line[], filter: LineFilter | null): Line[] {
  return filter ? lines.filter((l) => FILTERS[filter].includes(l.state)) : lines;
}

/** States a line can still leave (so it can be cancelled). */
export const FINISHED: LineState[] = ['accepted', 'cancelled', 'rolled_back'];

export interface LineGroup {
  key: GroupKey;
  lines: Line[];
}

/** Lines in the page's groups (empty groups left out): by state, then the daemon's order
 * (priority, then age, then id: the order the scheduler starts them in). `queuedOrder`, an
 * order of queued lines just asked of the daemon, is shown until it answers. */
export function groupLines(lines: Line[], queuedOrder: readonly string[] | null = null): LineGroup[] {
  return GROUPS.map(({ key, states }) => {
    const rank = (l: Line) => states.indexOf(l.state);
    const inGroup = lines.filter((l) => states.includes(l.state));
    inGroup.sort((a, b) =>
      key === 'done'
        ? b.updated_at.localeCompare(a.updated_at)
        : rank(a) - rank(b) ||
          b.priority - a.priority ||
          a.created_at.localeCompare(b.created_at) ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    return { key, lines: key === 'queued' ? inOrder(inGroup, queuedOrder) : inGroup };
  }).filter((g) => g.lines.length > 0);
}

export type Resource = 'lines' | 'projects' | 'review' | 'budget' | 'detail' | 'preflight' | 'decisions' | 'outbox';

const ALL: Resource[] = ['lines', 'projects', 'review', 'budget', 'detail', 'preflight', 'decisions', 'outbox'];

/** What each kind of event may have changed. */
const TOUCHES: Record<Event['kind'], Resource[]> = {
  project: ['projects', 'review'],
  line: ['lines', 'detail', 'budget', 'review', 'decisions'],
  step: ['lines', 'detail', 'budget'],
  journal: ['detail', 'review', 'decisions'],
  question: ['review', 'detail', 'decisions'],
  budget: ['budget', 'lines'],
  // What blocks changed: the banner, and the lines that say why they wait.
  preflight: ['preflight', 'lines', 'detail'],
  // A deploy started or ended: the line's deploys and its state.
  deploy: ['lines', 'detail'],
  // A message to the Catcher or PlanFix was queued, sent or failed: the settings' outbox.
  outbox: ['outbox'],
  // A run's transcript grew: only a view following that run reads it (with `after=`); no
  // list or page changes, so nothing is reloaded for it (they come many a second).
  run_event: [],
};

/** The preflight's blocking items: the daemon's first (they stop every line), then each
 * project's. */
export function blockingItems(p: Preflight | null): PreflightItem[] {
  const blocking = (p?.items ?? []).filter((i) => i.level === 'blocking');
  return [...blocking.filter((i) => i.scope === 'daemon'), ...blocking.filter((i) => i.scope !== 'daemon')];
}

/** The sandbox's warning (`[sandbox] mode = "off"`: agents run without bubblewrap), which the
 * banner says although it blocks nothing. */
export function sandboxOffItem(p: Preflight | null): PreflightItem | null {
  return p?.items.find((i) => i.code === 'sandbox' && i.level === 'warning') ?? null;
}

export function asIpcError(e: unknown): IpcError {
  return e instanceof IpcError ? e : new IpcError('internal', String(e), null);
}

/** The error key of an action on a line (accept, remarks, cancel, priority, level). */
export const lineKey = (id: string) => `line:${id}`;
/** The error key of an answer to a question. */
export const questionKey = (id: string) => `question:${id}`;

/** Whether a decided entry is a fork or question Anton may still answer (overriding the
 * default), not an agent's own `decided` journal line, which asks nothing: the daemon names
 * the question (`question_id`, the id `/api/questions/{id}/answer` takes). */
export const overridable = (d: Decision): boolean => d.question_id !== null;

export class ConveyorStore {
  status = $state<ConnectionStatus | null>(null);
  connection = $state<ConnectionView | null>(null);
  lines = $state<Line[]>([]);
  projects = $state<Project[]>([]);
  review = $state<Review | null>(null);
  budget = $state<Budget | null>(null);
  /** What would stop a step, as the daemon last checked it. */
  preflight = $state<Preflight | null>(null);
  /** The Catcher and PlanFix, and the daemon's messages to them. */
  outbox = $state<Outbox | null>(null);
  selectedId = $state<string | null>(null);
  /** The Lines page shows only the lines of this filter (opened from the morning's glance). */
  lineFilter = $state<LineFilter | null>(null);
  detail = $state<LineDetail | null>(null);
  diff = $state<LineDiff | null>(null);
  /** The selected line's runs, oldest first (loaded with its detail). */
  runs = $state<Run[] | null>(null);
  /** How far each run's transcript goes, as the daemon's `run_event`s last said: an open
   * conversation reads the rest when its run's number moves. */
  runSeq = $state<Record<number, number>>({});
  /** Errors by key: `lines`, `projects`, `review`, `budget`, `detail`, `diff`, `preflight`,
   * `decisions`, `outbox` (loading), `line:<id>`, `question:<id>`, `project`, `line-add`,
   * `order`, `connect`, `preflight-check`, `outbox-test` (actions). */
  errors = $state<Record<string, IpcError>>({});
  busy = $state<Record<string, boolean>>({});
  /** Questions answered from this app, newest last: `/api/review` lists only open ones. */
  answered = $state<Question[]>([]);
  /** The project whose "decided without Anton" catalogue the Lines page shows (Anton's
   * pick); without one, the selected line's project, else the first project. */
  decisionsPick = $state<string | null>(null);
  /** That catalogue, newest first, and the project it is of. */
  decisions = $state<{ project: string; items: Decision[] } | null>(null);

  /** The queued lines' order just sent to the daemon, shown until it answers. */
  pendingOrder = $state<string[] | null>(null);

  groups = $derived(groupLines(filterLines(this.lines, this.lineFilter), this.pendingOrder));
  connected = $derived(this.status?.state === 'connected');
  selected = $derived(this.lines.find((l) => l.id === this.selectedId) ?? null);
  blocking = $derived(blockingItems(this.preflight));
  sandboxOff = $derived(sandboxOffItem(this.preflight));
  decisionsProject = $derived(
    this.decisionsPick ?? this.selected?.project_id ?? this.projects[0]?.id ?? null,
  );

  /** How long events are coalesced before the pages are refreshed. */
  debounceMs = 150;
  private dirty = new Set<Resource>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private unlisten: (() => void)[] = [];
  private started = false;
  private loads: Record<string, number> = {};
  /** The ask whose answer shows now, by key. */
  private shown: Record<string, number> = {};

  /** Follows the connection and the daemon's events; loads everything once connected. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    try {
      this.unlisten.push(await api.onStatus((s) => this.setStatus(s)));
      this.unlisten.push(await api.onEvent((e) => this.onEvent(e)));
      this.unlisten.push(await api.onResync(() => this.onResync()));
      this.setStatus(await api.status());
    } catch (e) {
      this.errors.status = asIpcError(e);
    }
  }

  stop(): void {
    for (const u of this.unlisten.splice(0)) u();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.started = false;
  }

  setStatus(s: ConnectionStatus): void {
    const was = this.status?.state;
    this.status = s;
    if (s.state === 'connected' && was !== 'connected') void this.refreshAll();
  }

  onEvent(e: Event): void {
    const known = e.line_id ? this.lines.find((l) => l.id === e.line_id) : undefined;
    const notice = noticeFor(e, known && { title: known.title, state: known.state });
    if (notice) void api.notify(notice).catch(() => {});
    if (e.run) this.runSeq[e.run.run_id] = Math.max(this.runSeq[e.run.run_id] ?? 0, e.run.seq);
    // The state is news once: a repeated event (or the refresh) does not notify again.
    if (known && e.kind === 'line' && e.state) known.state = e.state as LineState;
    for (const r of TOUCHES[e.kind] ?? []) {
      if (r !== 'detail' || e.line_id === null || e.line_id === this.selectedId) this.dirty.add(r);
    }
    // A run's events (many a second) touch no page: no round of empty reloads for them.
    if (this.dirty.size > 0) this.schedule();
  }

  /** The event stream came back after a break: events may have been missed, so everything
   * is loaded again. */
  onResync(): void {
    for (const r of ALL) this.dirty.add(r);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.debounceMs);
  }

  /** Reloads what the events since the last flush may have changed. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const dirty = [...this.dirty];
    this.dirty.clear();
    await this.reload(dirty);
  }

  async refreshAll(): Promise<void> {
    await this.reload(ALL);
  }

  /** Loads what a page shows (each in parallel; failures kept under their keys). */
  async reload(what: Resource[]): Promise<void> {
    const jobs: Promise<void>[] = [];
    if (what.includes('lines')) jobs.push(this.loadLines());
    if (what.includes('projects')) jobs.push(this.loadProjects());
    if (what.includes('review')) jobs.push(this.loadReview());
    if (what.includes('budget')) jobs.push(this.loadBudget());
    if (what.includes('preflight')) jobs.push(this.loadPreflight());
    if (what.includes('outbox')) jobs.push(this.loadOutbox());
    if (what.includes('detail') && this.selectedId) jobs.push(this.loadDetail(this.selectedId));
    if (what.includes('decisions') && this.decisionsProject) jobs.push(this.loadDecisions(this.decisionsProject));
    await Promise.all(jobs);
  }

  /** What shows under `key` was just changed here: an answer to an ask made before it is
   * older than what shows, and is dropped. */
  private wrote(key: string): void {
    this.loads[key] = (this.loads[key] ?? 0) + 1;
    this.shown[key] = this.loads[key];
  }

  /**
   * Loads under `key`; when loads overlap, an answer is kept unless a later-asked one has been
   * kept already, so what shows only moves forward. (Keeping only the answer to the latest ask
   * starved the page on a slow machine: while answers to the morning's questions kept asking
   * for the review, each reply came after the next ask and none was ever shown.)
   */
  private async load<T>(key: string, get: () => Promise<T>, set: (v: T) => void): Promise<void> {
    const n = (this.loads[key] = (this.loads[key] ?? 0) + 1);
    try {
      const v = await get();
      if ((this.shown[key] ?? 0) > n) return;
      this.shown[key] = n;
      set(v);
      delete this.errors[key];
    } catch (e) {
      if (this.loads[key] === n) this.errors[key] = asIpcError(e);
    }
  }

  loadLines = () => this.load('lines', api.lines, (v) => (this.lines = v));
  loadProjects = () => this.load('projects', api.projects, (v) => (this.projects = v));
  loadReview = () => this.load('review', api.review, (v) => (this.review = v));
  loadBudget = () => this.load('budget', api.budget, (v) => (this.budget = v));
  loadPreflight = () => this.load('preflight', api.preflight, (v) => (this.preflight = v));
  loadOutbox = () => this.load('outbox', api.outbox, (v) => (this.outbox = v));
  loadConnection = () => this.load('connection', api.connection, (v) => (this.connection = v));

  /** How many decisions the catalogue shows (the daemon's newest). */
  decisionsLimit = 200;

  /** The catalogue of `project` (errors under `decisions`); an answer for a project no
   * longer shown is dropped. */
  loadDecisions = (project: string) =>
    this.load(
      'decisions',
      () => api.decisions(project, this.decisionsLimit),
      (items) => {
        if (this.decisionsProject === project) this.decisions = { project, items };
      },
    );

  /** Shows the catalogue of `project` (Anton's pick on the page). */
  async showDecisions(project: string): Promise<void> {
    this.decisionsPick = project;
    await this.loadDecisions(project);
  }

  /** The line's detail and its diff; answers for a line no longer selected are dropped. */
  async loadDetail(id: string): Promise<void> {
    const current = () => this.selectedId === id;
    await Promise.all([
      this.load('detail', () => api.line(id), (d) => current() && (this.detail = d)),
      this.load('diff', () => api.diff(id), (d) => current() && (this.diff = d)),
      this.load('runs', () => api.runs(id), (r) => current() && (this.runs = r)),
    ]);
  }

  async select(id: string | null): Promise<void> {
    if (id === this.selectedId) return;
    this.selectedId = id;
    this.detail = null;
    this.diff = null;
    this.runs = null;
    delete this.errors.detail;
    delete this.errors.diff;
    delete this.errors.runs;
    if (id) await this.loadDetail(id);
  }

  /** Runs an action under `key`: busy while it runs, its error kept there, never thrown. */
  private async act<T>(key: string, run: () => Promise<T>): Promise<T | null> {
    if (this.busy[key]) return null;
    this.busy[key] = true;
    delete this.errors[key];
    try {
      return await run();
    } catch (e) {
      this.errors[key] = asIpcError(e);
      return null;
    } finally {
      this.busy[key] = false;
    }
  }

  /** Puts a line the daemon returned in place, then reloads its detail and the lists. */
  private async applyLine(line: Line | null): Promise<boolean> {
    if (!line) return false;
    const i = this.lines.findIndex((l) => l.id === line.id);
    if (i >= 0) this.lines[i] = line;
    else this.lines.push(line);
    if (this.detail?.id === line.id) this.detail = { ...this.detail, ...line };
    await this.reload(line.id === this.selectedId ? ['lines', 'detail', 'budget'] : ['lines', 'budget']);
    return true;
  }

  accept = async (id: string) => this.applyLine(await this.act(lineKey(id), () => api.accept(id)));
  cancel = async (id: string) => this.applyLine(await this.act(lineKey(id), () => api.cancel(id)));
  remarks = async (id: string, text: string) =>
    text.trim() ? this.applyLine(await this.act(lineKey(id), () => api.remarks(id, text))) : false;
  setPriority = async (id: string, priority: number) =>
    this.applyLine(await this.act(lineKey(id), () => api.setPriority(id, priority)));
  /** Raises the line's level; a refusal (`level_lower`, `invalid_state`) stays on the line. */
  raiseLevel = async (id: string, level: Level) =>
    this.applyLine(await this.act(lineKey(id), () => api.raiseLevel(id, level)));

  /** Answers a question, or changes its answer while that can still change. */
  async answer(questionId: string, answer: Answer): Promise<boolean> {
    const q: Question | null = await this.act(questionKey(questionId), () => api.answer(questionId, answer));
    if (!q) return this.refused(questionId);
    this.answered = [...this.answered.filter((a) => a.id !== q.id), q];
    await this.reload(['review', 'lines']);
    return true;
  }

  /** Takes an answer back while its `answer` step has not started: the question is open again. */
  async takeBack(questionId: string): Promise<boolean> {
    const q: Question | null = await this.act(questionKey(questionId), () => api.takeBack(questionId));
    if (!q) return this.refused(questionId);
    this.answered = this.answered.filter((a) => a.id !== q.id);
    await this.reload(['review', 'lines']);
    return true;
  }

  /** After a refused answer: when its step had started meanwhile, the list is reloaded so the
   * card says the answer can no longer change. */
  private async refused(id: string): Promise<false> {
    if (this.errors[questionKey(id)]?.daemonCode === 'answer_started') {
      this.answered = this.answered.map((a) => (a.id === id ? { ...a, changeable: false } : a));
      await this.reload(['review']);
    }
    return false;
  }

  /** Opens the Lines page's list filtered (the page itself is the shell's to switch). */
  showLines(filter: LineFilter | null): void {
    this.lineFilter = filter;
  }

  /** Opens one line on the Lines page: the filter cleared, so its row is in the list. */
  async showLine(id: string): Promise<void> {
    this.lineFilter = null;
    await this.select(id);
  }

  /** Adds a project; the new one is in `projects` when this resolves, whatever the reload
   * does: a load of the list already under way (an event's) may answer without it, and the
   * line form would then drop the project it was just given as its choice. */
  async createProject(project: NewProject): Promise<Project | null> {
    const p = await this.act('project', () => api.createProject(project));
    if (!p) return null;
    if (!this.projects.some((q) => q.id === p.id)) this.projects.push(p);
    this.wrote('projects');
    await this.loadProjects();
    return p;
  }

  async createLine(line: NewLine): Promise<Line | null> {
    const l = await this.act('line-add', () => api.createLine(line));
    if (l) await this.applyLine(l);
    return l;
  }

  /** Queues the form's rows one by one, in their order (so that, of equal priority, they
   * start in it); a refused row does not stop the rest. Busy under `line-add` while they go;
   * each filled row's outcome, in order (none when a send is under way already). */
  async createLines(drafts: Draft[], projectId: string, priority: number | null): Promise<Outcome[]> {
    if (this.busy['line-add']) return [];
    this.busy['line-add'] = true;
    delete this.errors['line-add'];
    try {
      const outcomes = await sendInOrder(drafts, (d) => toNewLine(d, projectId, priority), api.createLine, asIpcError);
      for (const o of outcomes) {
        if (o.line && !this.lines.some((l) => l.id === o.line.id)) this.lines.push(o.line);
      }
      if (outcomes.some((o) => o.line)) {
        this.wrote('lines');
        await this.reload(['lines', 'budget']);
      }
      return outcomes;
    } finally {
      this.busy['line-add'] = false;
    }
  }

  /** Puts the queued lines in this order, first to start first, with one `PUT
   * /api/lines/order`: the new order shows at once, the daemon's priorities when it answers.
   * Refused (a line started meanwhile, say), the list goes back to the daemon's order and the
   * reason stays under `order`. */
  async reorder(ids: string[]): Promise<boolean> {
    if (this.busy.order) return false;
    this.pendingOrder = ids;
    const lines = await this.act('order', () => api.reorder(ids));
    if (lines) {
      for (const line of lines) {
        const i = this.lines.findIndex((l) => l.id === line.id);
        if (i >= 0) this.lines[i] = line;
      }
    }
    this.pendingOrder = null;
    await this.reload(['lines']);
    return lines !== null;
  }

  /** «Проверить»: the daemon runs its checks now; busy and errors under `preflight-check`. */
  async checkPreflight(): Promise<Preflight | null> {
    const p = await this.act('preflight-check', () => api.preflight());
    if (p) this.preflight = p;
    return p;
  }

  /** «Отправить тестовое сообщение»: queued at once (sent even at night), then the outbox is
   * loaded again; busy and errors (the daemon's `catcher_off`) under `outbox-test`. */
  async sendTestMessage(): Promise<OutboxItem | null> {
    const item = await this.act('outbox-test', () => api.outboxTest());
    if (item) await this.loadOutbox();
    return item;
  }

  /** Saves the connection settings and (re)connects; the status says how it went. */
  async connect(request: ConnectRequest): Promise<ConnectionStatus | null> {
    const s = await this.act('connect', () => api.connect(request));
    if (s) {
      // Maybe another daemon now: load everything again even if it was connected before.
      this.status = s;
      await Promise.all([this.loadConnection(), s.state === 'connected' ? this.refreshAll() : null]);
    }
    return s;
  }

  error(key: string): IpcError | null {
    return this.errors[key] ?? null;
  }
}

export const conveyorStore = new ConveyorStore();
