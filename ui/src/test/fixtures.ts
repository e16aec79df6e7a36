// The conveyor's wire values for tests: one builder per type, with plain defaults, and the
// fields a test cares about passed in `over`.
import type {
  Event,
  JournalEntry,
  Line,
  LineDetail,
  Preflight,
  PreflightItem,
  Project,
  Question,
  Step,
  Tokens,
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
  session_id: 's',
  branch: `line/${id}`,
  reason: null,
  reason_code: null,
  park_until: null,
  steps: [],
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
  attempts: 1,
  cost_usd: 0,
  tokens: noTokens,
  error: null,
  duration_ms: null,
  ...over,
});

/** The line as `GET /api/lines/{id}` gives it: no journal, nothing spent. */
export const detail = (l: Line, over: Partial<LineDetail> = {}): LineDetail => ({
  ...l,
  journal: [],
  budget: { cost_usd: 0, runs: 0, tokens: noTokens },
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

/** An open question of line `a`, not yet seen by the judge. */
export const question = (over: Partial<Question> = {}): Question => ({
  id: 'q1',
  line_id: 'a',
  project_id: 'p1',
  text: 'Which port?',
  options: ['8080', '9090'],
  default: '8080',
  why: 'two services want 8080',
  reversible: true,
  expensive: false,
  status: 'unvalidated',
  answer: null,
  created_at: '2026-11-29T21:00:00Z',
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
