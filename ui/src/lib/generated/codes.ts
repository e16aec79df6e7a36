// Generated from the daemon's enums and constants by src-tauri/src/bindings.rs. Do not edit:
// run `UPDATE_BINDINGS=1 cargo test -p pult bindings` after changing them.

import type { Channel, ErrorCode, OutboxKind, OutboxState, PreflightCode, ReasonCode, RunOutcome } from './conveyor';

/** Every `ReasonCode`: why a line waits or stopped. */
export const REASON_CODES: readonly ReasonCode[] = ['cancelled', 'step_failed', 'agent_fatal', 'session_in_use', 'no_conversation', 'session_unusable', 'budget_cap', 'budget', 'usage_limit', 'budget_miss', 'preflight', 'gate_red', 'gate_failed', 'project_config', 'dirty_checkout', 'worktree', 'recovery', 'pending_judgement', 'waiting_answer', 'role_rework', 'no_ui_scenarios', 'no_test_evidence', 'rolled_back', 'deploy_red', 'external_down', 'hook_blocked', 'vault_closed', 'internal'];
/** Every `PreflightCode`: the preflight's checks. */
export const PREFLIGHT_CODES: readonly PreflightCode[] = ['agent_binary', 'agent_login', 'root_guard', 'judge_hooks', 'git', 'git_identity', 'sandbox', 'data_dir', 'disk_space', 'repository', 'main_branch', 'clean_checkout', 'project_command', 'tests_paths', 'catcher', 'planfix', 'vault', 'telegram'];
/** Every `ErrorCode` of the daemon's API. */
export const DAEMON_ERROR_CODES: readonly ErrorCode[] = ['unauthorized', 'not_found', 'bad_request', 'invalid_state', 'unmerged_commits', 'exists', 'not_a_repository', 'unknown_project', 'not_an_option', 'answer_started', 'level_lower', 'catcher_off', 'bad_planfix_task', 'duplicate_title', 'duplicate_line', 'unknown_line', 'internal'];
/** Every `Channel` of the outbox: where a message to Anton goes. */
export const OUTBOX_CHANNELS: readonly Channel[] = ['telegram', 'planfix'];
/** Every `OutboxKind`: what a message to Anton says. */
export const OUTBOX_KINDS: readonly OutboxKind[] = ['question', 'ready', 'rolled_back', 'gate_failed', 'vault_closed', 'digest', 'edit', 'report', 'test'];
/** Every `OutboxState`: where a message to Anton stands. */
export const OUTBOX_STATES: readonly OutboxState[] = ['pending', 'sent', 'failed'];
/** Every `RunOutcome`: how a run of a step ended, or that it has not. */
export const RUN_OUTCOMES: readonly RunOutcome[] = ['running', 'finished', 'ok', 'red', 'failed', 'usage_limit', 'max_budget', 'session_in_use', 'no_conversation', 'fatal', 'interrupted', 'cancelled'];
/** Failed checking rounds in a row (`Line.rounds`) at which a line needs Anton. */
export const GATE_ROUNDS = 3;
