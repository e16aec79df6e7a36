// Generated from crates/conveyor-api by ts-rs (`UPDATE_BINDINGS=1 cargo test -p conveyor-api`).
// Do not edit by hand.

export type Health = { status: string, version: string, };

export type ReasonCode = "cancelled" | "step_failed" | "agent_fatal" | "session_in_use" | "no_conversation" | "session_unusable" | "budget_cap" | "budget" | "usage_limit" | "budget_miss" | "preflight" | "gate_red" | "gate_failed" | "project_config" | "dirty_checkout" | "worktree" | "recovery" | "pending_judgement" | "waiting_answer" | "role_rework" | "no_ui_scenarios" | "no_test_evidence" | "rolled_back" | "deploy_red" | "external_down" | "hook_blocked" | "vault_closed" | "internal";

export type PreflightLevel = "ok" | "warning" | "blocking";

export type PreflightScope = "daemon" | "project";

export type PreflightCode = "agent_binary" | "agent_login" | "root_guard" | "judge_hooks" | "git" | "git_identity" | "sandbox" | "data_dir" | "disk_space" | "repository" | "main_branch" | "clean_checkout" | "project_command" | "tests_paths" | "catcher" | "planfix" | "vault" | "telegram";

export type PreflightItem = { code: PreflightCode, level: PreflightLevel, scope: PreflightScope, 
/**
 * The project, for `scope: project`.
 */
project_id?: string, 
/**
 * What was found, in the daemon's words.
 */
message: string, 
/**
 * What to do about it; `null` when nothing is to be done.
 */
fix: string | null, };

export type Preflight = { 
/**
 * Whether any item blocks (see each item's scope for what it blocks).
 */
blocking: boolean, 
/**
 * When the checks ran (they run at start, every minute, and on this request).
 */
checked_at: string, items: Array<PreflightItem>, };

export type ApiErrorBody = { code: ErrorCode, message: string, };

export type ErrorCode = "unauthorized" | "not_found" | "bad_request" | "invalid_state" | "unmerged_commits" | "exists" | "not_a_repository" | "unknown_project" | "not_an_option" | "answer_started" | "level_lower" | "catcher_off" | "bad_planfix_task" | "duplicate_title" | "duplicate_line" | "unknown_line" | "internal";

export type Project = { id: string, name: string, repo_path: string, main_branch: string, created_at: string, };

export type NewProject = { 
/**
 * Unique among projects; at least one character past blanks.
 */
name: string, 
/**
 * The absolute path, on the daemon's machine, of a git repository that has
 * `main_branch` (422 `not_a_repository` otherwise). Absolute as the daemon's system
 * has it, which the document's pattern says: from `/` on Unix; from a drive
 * (`C:\` or `C:/`) or a UNC share (`\\server\share`) on Windows.
 */
repo_path: string, 
/**
 * The branch lines fork from and merge into; `main` when absent.
 */
main_branch?: string, };

export type LineState = "queued" | "planning" | "running" | "waiting_budget" | "waiting_answer" | "gate" | "fixing" | "merging" | "deploying" | "awaiting_acceptance" | "accepted" | "needs_human" | "rolled_back" | "blocked" | "cancelled";

export type Level = "light" | "medium" | "full";

export type Line = { id: string, project_id: string, title: string, task: string, priority: number, state: LineState, level: Level | null, 
/**
 * Why the level is what it is: the planner's reason, or the last raise's (a path the
 * diff touches, the judge, Anton).
 */
level_why: string | null, 
/**
 * Failed checking rounds in a row (roles or gate); at 3 the line needs Anton.
 */
rounds: number, session_id: string, branch: string, 
/**
 * Why the line stopped or waits, in the daemon's words.
 */
reason: string | null, 
/**
 * Why the line stopped or waits, as a code a client words itself; `null` with no
 * reason, or for a reason given before codes existed.
 */
reason_code: ReasonCode | null, park_until: string | null, steps: Array<Step>, 
/**
 * What the never-autonomous guard stopped the line's agents (and their subagents)
 * from doing, oldest first.
 */
denials: Array<Denial>, 
/**
 * What the sandbox refused the line's agents (writes, hosts, refs), oldest first.
 */
refusals: Array<Refusal>, 
/**
 * The line's deploys after its merges, oldest first.
 */
deploys: Array<Deploy>, 
/**
 * The PlanFix task the line reports to when done (its number), if any.
 */
planfix_task: string | null, 
/**
 * Sum of the steps' costs (USD as the CLI reports it: a proxy, not a bill).
 */
cost_usd: number, created_at: string, updated_at: string, };

export type LineDetail = { journal: Array<JournalEntry>, 
/**
 * Every fork and question of the line, oldest first, with where it stands.
 */
questions: Array<Question>, budget: LineBudget, id: string, project_id: string, title: string, task: string, priority: number, state: LineState, level: Level | null, 
/**
 * Why the level is what it is: the planner's reason, or the last raise's (a path the
 * diff touches, the judge, Anton).
 */
level_why: string | null, 
/**
 * Failed checking rounds in a row (roles or gate); at 3 the line needs Anton.
 */
rounds: number, session_id: string, branch: string, 
/**
 * Why the line stopped or waits, in the daemon's words.
 */
reason: string | null, 
/**
 * Why the line stopped or waits, as a code a client words itself; `null` with no
 * reason, or for a reason given before codes existed.
 */
reason_code: ReasonCode | null, park_until: string | null, steps: Array<Step>, 
/**
 * What the never-autonomous guard stopped the line's agents (and their subagents)
 * from doing, oldest first.
 */
denials: Array<Denial>, 
/**
 * What the sandbox refused the line's agents (writes, hosts, refs), oldest first.
 */
refusals: Array<Refusal>, 
/**
 * The line's deploys after its merges, oldest first.
 */
deploys: Array<Deploy>, 
/**
 * The PlanFix task the line reports to when done (its number), if any.
 */
planfix_task: string | null, 
/**
 * Sum of the steps' costs (USD as the CLI reports it: a proxy, not a bill).
 */
cost_usd: number, created_at: string, updated_at: string, };

export type LineBudget = { cost_usd: number, runs: number, tokens: Tokens, };

export type NewLine = { 
/**
 * An existing project's id (422 `unknown_project` otherwise).
 */
project_id: string, title: string, task: string, 
/**
 * Higher runs first; 0 when absent.
 */
priority?: number, 
/**
 * The PlanFix task (its number) to post the line's report to when it is done.
 */
planfix_task?: string, };

export type LinePatch = { 
/**
 * Higher runs first.
 */
priority: number, };

export type LineOrder = { 
/**
 * Ids of queued lines, each once (422 `duplicate_line` otherwise); an id no line has
 * is 422 `unknown_line`, a line that is not queued 409 `invalid_state`.
 */
line_ids: Array<string>, };

export type Remarks = { text: string, };

export type StepKind = "planner" | "executor" | "tester" | "reviewer" | "skeptic" | "extra" | "fixer" | "rework" | "answer" | "remarks" | "investigate" | "judge";

export type StepSize = "xs" | "s" | "m" | "l" | "xl";

export type StepState = "pending" | "running" | "done" | "failed" | "interrupted" | "cancelled";

export type Step = { id: string, n: number, kind: StepKind, title: string, state: StepState, 
/**
 * The planner's guess of its size (executor steps of a plan that gave one).
 */
size: StepSize | null, attempts: number, 
/**
 * The session the step runs in when it is not the line's (a judge's or a checking
 * role's own session).
 */
session_id: string | null, 
/**
 * The project's own agent the step ran as (`claude -p --agent <name>`, defined in
 * `.claude/agents/<name>.md` on fresh main); null for a built-in prompt.
 */
agent: string | null, 
/**
 * A checking role's verdict (tester, reviewer, skeptic, extra); null before it gave one
 * and for the other kinds.
 */
verdict: RoleVerdict | null, 
/**
 * Summed over attempts.
 */
cost_usd: number, tokens: Tokens, error: string | null, 
/**
 * Wall time of the step's runs, summed over attempts (a running attempt counts up to
 * now); none before the first run.
 */
duration_ms: number | null, };

export type Denial = { step_n: number, tool_name: string, 
/**
 * The call's input as the CLI reported it (a Bash `command`, a `file_path`, …).
 */
input: unknown, at: string, };

export type RefusalKind = "write" | "host" | "ref";

export type Refusal = { step_n: number, kind: RefusalKind, 
/**
 * What was tried: the path, `host:port`, or `refs/heads/x: <old> -> <new>`.
 */
what: string, at: string, };

export type DeployOutcome = "running" | "green" | "rolled_back" | "red";

export type Deploy = { commit: string, 
/**
 * The last green deploy's commit (the merge's parent when none was green before).
 */
previous_commit: string, started_at: string, finished_at: string | null, outcome: DeployOutcome, 
/**
 * The end of what `deploy` (and `rollback`, when it ran) printed.
 */
output_tail: string, health: Array<HealthCheck>, };

export type HealthCheck = { at: string, ok: boolean, output_tail: string, };

export type RoleCall = "pass" | "rework";

export type RoleVerdict = { verdict: RoleCall, findings: Array<Finding>, };

export type Finding = { path?: string, line?: number, text: string, };

export type SetLevel = { level: Level, };

export type Tokens = { input: number, output: number, cache_read: number, cache_write: number, };

export type JournalKind = "fork" | "question" | "decided" | "uncovered";

export type JournalEntry = { id: number, line_id: string, step_id: string | null, kind: JournalKind | null, text: string | null, options: Array<string>, default: string | null, why: string | null, reversible: boolean | null, expensive: boolean | null, valid: boolean, error: string | null, raw: string, created_at: string, };

export type QuestionStatus = "unvalidated" | "validated" | "duplicate" | "rework" | "decided" | "answered";

export type QuestionKind = "fork" | "question";

export type DecisionSource = "agent" | "judge" | "daemon";

export type Question = { id: string, line_id: string, project_id: string, kind: QuestionKind, text: string, options: Array<string>, default: string | null, why: string | null, reversible: boolean | null, expensive: boolean | null, status: QuestionStatus, 
/**
 * Who set the status (none while unvalidated).
 */
decided_by: DecisionSource | null, 
/**
 * Why it has its status: the judge's or the daemon's reason.
 */
verdict_why: string | null, 
/**
 * The open validated question this one repeats.
 */
duplicate_of: string | null, 
/**
 * Validated by day as irreversible and expensive: it cannot wait for the morning.
 */
urgent: boolean, 
/**
 * How many times it was sent back to the line's session.
 */
reworks: number, answer: string | null, 
/**
 * The answer can still be changed or taken back: its `answer` step has not started.
 */
changeable: boolean, created_at: string, 
/**
 * When the judge (or the daemon) validated it; what decides `questions` or `later`.
 */
validated_at: string | null, answered_at: string | null, };

export type Decision = { id: string, project_id: string, line_id: string, source: DecisionSource, text: string, why: string | null, 
/**
 * The fork or question it decided, which Anton may still answer; none for an
 * agent's own `decided` entry.
 */
question_id: string | null, 
/**
 * The question's options and the default that stands (empty and none otherwise).
 */
options: Array<string>, default: string | null, created_at: string, };

export type AnswerOption = { option: string, };

export type AnswerText = { text: string, };

export type Answer = AnswerOption | AnswerText;

export type Review = { 
/**
 * The end of the last night, by day; none during the night (the list is live) or
 * when no `night` is configured.
 */
frozen_at: string | null, 
/**
 * Forks and questions not yet judged, over all projects.
 */
pending_judgement: number, 
/**
 * Forks and questions sent back to their line's session, over all projects.
 */
in_rework: number, 
/**
 * Last night at a glance.
 */
night: NightGlance, projects: Array<ReviewProject>, };

export type NightGlance = { 
/**
 * When the night began (the last one, or the one going on); 24 hours ago when no
 * `night` is configured.
 */
since: string, 
/**
 * Lines by where they stand now (`running`: every state the daemon moves on by itself).
 */
awaiting_acceptance: number, running: number, waiting_answer: number, needs_human: number, rolled_back: number, 
/**
 * Spent by the runs that ended since `since` (USD as the CLI reports it).
 */
cost_usd: number, 
/**
 * The rolling window's threshold the budget plans against; none without a window pool.
 */
window_threshold_usd: number | null, 
/**
 * Forks and questions written since `since` that the judge (or the daemon's rules) sent
 * back to their session, or found to repeat an open question.
 */
sent_back: number, duplicates: number, };

export type ReviewProject = { project_id: string, name: string, 
/**
 * Validated questions, open, validated before the freeze.
 */
questions: Array<Question>, 
/**
 * Validated after the freeze (by day): they wait for tomorrow's list, except the
 * `urgent` ones.
 */
later: Array<Question>, 
/**
 * Questions Anton answered, on lines not yet accepted or cancelled.
 */
answered: Array<Question>, 
/**
 * The collapsed "decided by default" list, each with its why.
 */
decided: Array<Decision>, };

export type Budget = { 
/**
 * Every configured pool, in the order window, weekly, monthly.
 */
pools: Array<BudgetPool>, 
/**
 * Estimates of the steps running now (counted against every pool).
 */
running_estimate_usd: number, 
/**
 * The steps running now: what each was admitted at, has spent so far and is counted
 * for.
 */
running: Array<RunningStep>, 
/**
 * Per step kind: what history says a step costs.
 */
kinds: Array<KindStats>, 
/**
 * Steps cut by a usage limit or by their `--max-budget-usd` cap.
 */
misses: Misses, 
/**
 * No step starts before this (a usage limit of the account).
 */
park_until: string | null, last_rate_limit: RateLimit | null, };

export type PoolKind = "window" | "weekly" | "monthly";

export type BudgetPool = { kind: PoolKind, 
/**
 * The pool's span in seconds (the calendar month: its length).
 */
span_secs: number, spent_usd: number, threshold_usd: number, 
/**
 * When the pool next has room again (the oldest spending leaves a rolling pool, or
 * the month turns); none when nothing is spent.
 */
resets_at: string | null, 
/**
 * The server's own utilisation of this pool (0..1), when a `rate_limit_event` said.
 */
utilization: number | null, 
/**
 * The pool's real size as the server's utilisation shows it; none for a pool the
 * server reports no utilisation of (the month).
 */
calibration: Calibration | null, };

export type RunningStep = { line_id: string, step_n: number, kind: StepKind, 
/**
 * What it was admitted at.
 */
estimate_usd: number, 
/**
 * What it has spent so far, from the usage the CLI reports as the run goes (the
 * turn's output tokens counted from its text until the run's result gives the
 * exact cost).
 */
live_usd: number, 
/**
 * What the budget counts for it: the larger of its estimate and what steps of its
 * kind that spent as much went on to cost.
 */
claim_usd: number, };

export type Calibration = { 
/**
 * The median of the observations.
 */
observed_size_usd: number, 
/**
 * The threshold the daemon proposes (used when config says `threshold_usd = "auto"`,
 * within its floor and ceiling).
 */
proposed_usd: number, 
/**
 * How far the observations scatter around it (1.4826 × their median absolute
 * deviation: one standard deviation for normal scatter).
 */
spread_usd: number, 
/**
 * How many observations it rests on.
 */
observations: number, };

export type KindStats = { kind: StepKind, 
/**
 * Finished runs counted.
 */
count: number, median_usd: number | null, 
/**
 * The high quantile (p90) of the finished runs' cost.
 */
high_usd: number | null, 
/**
 * The estimate the policy uses now for a step of this kind (margin included).
 */
estimate_usd: number, };

export type Misses = { total: number, 
/**
 * In the last 24 hours.
 */
recent: number, 
/**
 * Set when misses are frequent ("steps too large: cut them finer").
 */
advice: string | null, };

export type RateLimit = { status: string, resets_at: string | null, rate_limit_type: string | null, utilization: number | null, observed_at: string, };

export type LineDiff = { 
/**
 * The fork point on main; none when the branch is gone (an accepted line).
 */
base: string | null, 
/**
 * The branch's tip.
 */
head: string | null, files: Array<FileDiff>, };

export type FileChange = "added" | "modified" | "deleted" | "renamed";

export type FileDiff = { 
/**
 * The path after the change (before it, for a deleted file).
 */
path: string, change: FileChange, 
/**
 * The unified hunks (`@@ … @@` headers and ` `, `+`, `-` lines); empty for binary files.
 */
patch: string, binary: boolean, };

export type Channel = "telegram" | "planfix";

export type OutboxKind = "question" | "ready" | "rolled_back" | "gate_failed" | "vault_closed" | "digest" | "edit" | "report" | "test";

export type OutboxState = "pending" | "sent" | "failed";

export type OutboxItem = { id: number, channel: Channel, kind: OutboxKind, state: OutboxState, 
/**
 * Delivery attempts so far.
 */
attempts: number, 
/**
 * When the next attempt is due, while pending.
 */
next_at: string | null, last_error: string | null, 
/**
 * The line it is about, if any.
 */
line_id: string | null, 
/**
 * Written at night: held for the digest sent when the night ends.
 */
held: boolean, 
/**
 * The first lines of what it says.
 */
preview: string, created_at: string, sent_at: string | null, };

export type Outbox = { catcher: ChannelStatus, planfix: ChannelStatus, 
/**
 * Pending, then the newest sent and failed ones (at most 200 in all).
 */
items: Array<OutboxItem>, pending: number, sent: number, failed: number, };

export type ChannelStatus = { configured: boolean, 
/**
 * The chat id, or PlanFix's base URL.
 */
target: string | null, };

export type RunOutcome = "running" | "finished" | "ok" | "red" | "failed" | "usage_limit" | "max_budget" | "session_in_use" | "no_conversation" | "fatal" | "interrupted" | "cancelled";

export type Run = { id: number, step_n: number, 
/**
 * The step's kind: a judge's and a checking role's runs are told apart by it.
 */
kind: StepKind, attempt: number, 
/**
 * The session the run is in (the line's, or the step's own); null before it is known.
 */
session_id: string | null, started_at: string, ended_at: string | null, 
/**
 * Its own cost; 0 while it runs.
 */
cost_usd: number, outcome: RunOutcome, 
/**
 * The shell command that continues the run's session by hand on the daemon's machine
 * (`cd <worktree> && claude --resume <session>`, as the agent's user and home when it
 * has its own); null while the session or the worktree is not known.
 */
resume: string | null, };

export type TranscriptKind = "text" | "thinking" | "tool_use" | "tool_result" | "result" | "error";

export type TranscriptEvent = { 
/**
 * 1-based, in the order of the log; `after=<seq>` reads the events past it.
 */
seq: number, 
/**
 * When the daemon read it (RFC 3339); the stream carries no times of its own.
 */
at: string | null, kind: TranscriptKind, 
/**
 * Text, thinking, a result's text or an error's message.
 */
text: string | null, 
/**
 * The tool of a call or of the call a result answers.
 */
tool: string | null, 
/**
 * The id that pairs a call with its result.
 */
tool_use_id: string | null, 
/**
 * A call's input, as the model gave it.
 */
input: unknown, 
/**
 * A result's text, cut to a bound with a mark when longer (see `output_bytes`).
 */
output: string | null, 
/**
 * The full size of a result's text in bytes, when `output` was cut.
 */
output_bytes: number | null, is_error: boolean, };

export type Transcript = { events: Array<TranscriptEvent>, 
/**
 * The run has ended and every event of its log is in this answer or an earlier one.
 */
done: boolean, 
/**
 * The tokens the run has used so far (each message's usage once, as the daemon meters
 * a running step).
 */
tokens: Tokens, 
/**
 * What the run has cost so far: the CLI's own figure once it has ended, the daemon's
 * live meter while it runs.
 */
cost_usd: number, };

export type RunEvent = { run_id: number, seq: number, };

export type EventKind = "project" | "line" | "step" | "journal" | "question" | "budget" | "preflight" | "deploy" | "outbox" | "run_event";

export type EventState = LineState | StepState | QuestionStatus;

export type Event = { seq: number, kind: EventKind, line_id: string | null, project_id: string | null, step_n: number | null, 
/**
 * The new state of the line or step (or the question's new status), when the event is a
 * state change.
 */
state: EventState | null, detail: string | null, at: string, 
/**
 * A `run_event`'s run and how far its transcript goes; absent from every other kind.
 */
run?: RunEvent, };
