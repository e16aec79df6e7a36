// The conveyor's wire values for tests: one builder per type, with plain defaults, and the
// fields a test cares about passed in `over`.
import type {
  Budget,
  BudgetPool,
  Calibration,
  Decision,
  Denial,
  Deploy,
  Event,
  JournalEntry,
  Line,
  LineDetail,
  NightGlance,
  Outbox,
  OutboxItem,
  Preflight,
  PreflightItem,
  Project,
  Question,
  Refusal,
  Review,
  ReviewProject,
  Run,
  RunningStep,
  Step,
  Tokens,
  TranscriptEvent,
} from '../lib/generated/conveyor';

export const noTokens: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

/** A line of project `p1` on its branch `line/<id>`, with no steps yet. */
export const line = (id: string, state: Line['state'], over: Partial<Line> = {}): Line => ({
  id,
  project_id: 'p1',
  title: `line ${id}`,
  task: 'do it',
  priority: 0,
  state,
  level: null,
  level_why: null,
  rounds: 0,
  session_id: 's',
  branch: `line/${id}`,
  reason: null,
  reason_code: null,
  park_until: null,
  steps: [],
  denials: [],
  refusals: [],
  deploys: [],
  planfix_task: null,
  cost_usd: 0,
  created_at: '2026-11-29T20:00:00Z',
  updated_at: '2026-11-29T20:00:00Z',
  ...over,
});

/** A finished first step that cost nothing. */
export const step = (over: Partial<Step> = {}): Step => ({
  id: 's1',
  n: 1,
  kind: 'executor',
  title: 'step',
  state: 'done',
  size: null,
  attempts: 1,
  session_id: null,
  agent: null,
  verdict: null,
  cost_usd: 0,
  tokens: noTokens,
  error: null,
  duration_ms: null,
  ...over,
});

/** The line as `GET /api/lines/{id}` gives it: no journal, no questions, nothing spent. */
export const detail = (l: Line, over: Partial<LineDetail> = {}): LineDetail => ({
  ...l,
  journal: [],
  questions: [],
  budget: { cost_usd: 0, runs: 0, tokens: noTokens },
  ...over,
});

/** What the guard stopped in step 2: `npm publish` through Bash. */
export const denial = (over: Partial<Denial> = {}): Denial => ({
  step_n: 2,
  tool_name: 'Bash',
  input: { command: 'npm publish', description: 'release' },
  at: '2026-11-29T21:30:00Z',
  ...over,
});

/** What the sandbox refused in step 2: a connection to `registry.npmjs.org:443`. */
export const refusal = (over: Partial<Refusal> = {}): Refusal => ({
  step_n: 2,
  kind: 'host',
  what: 'registry.npmjs.org:443',
  at: '2026-11-29T21:40:00Z',
  ...over,
});

/** A green deploy of commit 0123456… over fedcba9…, 90 seconds, no health check yet. */
export const deploy = (over: Partial<Deploy> = {}): Deploy => ({
  commit: '0123456789abcdef0123456789abcdef01234567',
  previous_commit: 'fedcba9876543210fedcba9876543210fedcba98',
  started_at: '2026-12-01T10:00:00Z',
  finished_at: '2026-12-01T10:01:30Z',
  outcome: 'green',
  output_tail: 'deployed\n',
  health: [],
  ...over,
});

/** A well-formed `decided` entry of line `a`. */
export const entry = (over: Partial<JournalEntry> = {}): JournalEntry => ({
  id: 1,
  line_id: 'a',
  step_id: null,
  kind: 'decided',
  text: 'Used port 8080',
  options: [],
  default: null,
  why: null,
  reversible: true,
  expensive: false,
  valid: true,
  error: null,
  raw: '{}',
  created_at: 'x',
  ...over,
});

/** A question of line `a` the judge validated in the night: it waits for Anton's answer. */
export const question = (over: Partial<Question> = {}): Question => ({
  id: 'q1',
  line_id: 'a',
  project_id: 'p1',
  kind: 'question',
  text: 'Which port?',
  options: ['8080', '9090'],
  default: '8080',
  why: 'two services want 8080',
  reversible: true,
  expensive: false,
  status: 'validated',
  decided_by: 'judge',
  verdict_why: null,
  duplicate_of: null,
  urgent: false,
  reworks: 0,
  answer: null,
  changeable: false,
  created_at: '2026-11-29T21:00:00Z',
  validated_at: '2026-11-29T21:05:00Z',
  answered_at: null,
  ...over,
});

/** A fork of line `a` the judge decided by default (an answerable question id). */
export const decision = (over: Partial<Decision> = {}): Decision => ({
  id: 'q7',
  project_id: 'p1',
  line_id: 'a',
  source: 'judge',
  text: 'Keep the old API?',
  why: 'nothing depends on the new one yet',
  question_id: 'q7',
  options: ['keep', 'drop'],
  default: 'keep',
  created_at: '2026-11-29T22:00:00Z',
  ...over,
});

/** Project `p1`'s block on the morning page, with nothing in it. */
export const reviewProject = (over: Partial<ReviewProject> = {}): ReviewProject => ({
  project_id: 'p1',
  name: 'shop',
  questions: [],
  later: [],
  answered: [],
  decided: [],
  ...over,
});

/** A quiet night since 22:00 UTC on 29 November: nothing ran, nothing cost, a 5-hour window of
 * $10. */
export const night = (over: Partial<NightGlance> = {}): NightGlance => ({
  since: '2026-11-29T22:00:00Z',
  awaiting_acceptance: 0,
  running: 0,
  waiting_answer: 0,
  needs_human: 0,
  rolled_back: 0,
  cost_usd: 0,
  window_threshold_usd: 10,
  sent_back: 0,
  duplicates: 0,
  ...over,
});

/** The morning page of `projects`: live (not frozen), nothing judged or sent back, a quiet
 * night. */
export const reviewOf = (projects: ReviewProject[] = [], over: Partial<Review> = {}): Review => ({
  frozen_at: null,
  pending_judgement: 0,
  in_rework: 0,
  night: night(),
  projects,
  ...over,
});

/** Project `p1`, "shop". */
export const project = (over: Partial<Project> = {}): Project => ({
  id: 'p1',
  name: 'shop',
  repo_path: '/r',
  main_branch: 'main',
  created_at: 'x',
  ...over,
});

/** A line event of no line in particular. */
export const ev = (over: Partial<Event>): Event => ({
  seq: 1,
  kind: 'line',
  line_id: null,
  project_id: null,
  step_n: null,
  state: null,
  detail: null,
  at: '2026-11-29T23:00:00Z',
  ...over,
});

/** A daemon-scope preflight item that is fine. */
export const preflightItem = (over: Partial<PreflightItem> = {}): PreflightItem => ({
  code: 'git',
  level: 'ok',
  scope: 'daemon',
  message: 'git version 2.43.0',
  fix: null,
  ...over,
});

/** The agent not logged in, as the daemon reports it. */
export const notLoggedIn = preflightItem({
  code: 'agent_login',
  level: 'blocking',
  message: 'claude is not logged in (authMethod: none)',
  fix: 'run `claude auth login` as the user the daemon runs as',
});

/** A preflight of `items`, blocking when one of them blocks. */
export const preflight = (items: PreflightItem[]): Preflight => ({
  blocking: items.some((i) => i.level === 'blocking'),
  checked_at: '2026-12-02T09:00:00Z',
  items,
});

/** A test message to the Catcher, sent on the first attempt on 2 December at 09:00 UTC. */
export const outboxItem = (over: Partial<OutboxItem> = {}): OutboxItem => ({
  id: 1,
  channel: 'telegram',
  kind: 'test',
  state: 'sent',
  attempts: 1,
  next_at: null,
  last_error: null,
  line_id: null,
  held: false,
  preview: 'Conveyor: a test message',
  created_at: '2026-12-02T09:00:00Z',
  sent_at: '2026-12-02T09:00:01Z',
  ...over,
});

/** The outbox of `items`, counted; the Catcher configured for chat 42, PlanFix not. */
export const outboxOf = (items: OutboxItem[] = [], over: Partial<Outbox> = {}): Outbox => ({
  catcher: { configured: true, target: '42' },
  planfix: { configured: false, target: null },
  items,
  pending: items.filter((i) => i.state === 'pending').length,
  sent: items.filter((i) => i.state === 'sent').length,
  failed: items.filter((i) => i.state === 'failed').length,
  ...over,
});

/** A $10 five-hour window with $1.50 spent, no reset due, no word from the server. */
export const budgetPool = (over: Partial<BudgetPool> = {}): BudgetPool => ({
  kind: 'window',
  span_secs: 18000,
  spent_usd: 1.5,
  threshold_usd: 10,
  resets_at: null,
  utilization: null,
  calibration: null,
  ...over,
});

/** The server's view of a pool: about $40 give or take $3, from 12 observations, $36 proposed. */
export const calibration = (over: Partial<Calibration> = {}): Calibration => ({
  observed_size_usd: 40,
  proposed_usd: 36,
  spread_usd: 3,
  observations: 12,
  ...over,
});

/** Step 2 of line `a`, an executor admitted at $1, $0.40 spent so far, counted at $1.20. */
export const runningStep = (over: Partial<RunningStep> = {}): RunningStep => ({
  line_id: 'a',
  step_n: 2,
  kind: 'executor',
  estimate_usd: 1,
  live_usd: 0.4,
  claim_usd: 1.2,
  ...over,
});

/** `GET /api/budget` with no pools, nothing running, no misses, no park. */
export const budget = (over: Partial<Budget> = {}): Budget => ({
  pools: [],
  running_estimate_usd: 0,
  running: [],
  kinds: [],
  misses: { total: 0, recent: 0, advice: null },
  park_until: null,
  last_rate_limit: null,
  ...over,
});

export const run = (over: Partial<Run> = {}): Run => ({
  id: 7,
  step_n: 2,
  kind: 'executor',
  attempt: 1,
  session_id: 'sess-1',
  started_at: '2026-12-04T01:00:00Z',
  ended_at: null,
  cost_usd: 0,
  outcome: 'running',
  resume: "cd /srv/conveyor/worktrees/l1 && HOME=/var/lib/agent claude --resume sess-1",
  ...over,
});

/** A transcript event of `kind`, numbered `seq`. */
export const tev = (seq: number, kind: TranscriptEvent['kind'], over: Partial<TranscriptEvent> = {}): TranscriptEvent => ({
  seq,
  at: null,
  kind,
  text: null,
  tool: null,
  tool_use_id: null,
  input: null,
  output: null,
  output_bytes: null,
  is_error: false,
  ...over,
});
