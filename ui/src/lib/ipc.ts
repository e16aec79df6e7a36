// The only module that talks to Tauri. Components and stores call these typed functions;
// tests mock this module. Every failing call rejects with an `IpcError` carrying the
// backend's stable `code` (see generated/types.ts: ErrorCode).
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { open as openDialog } from '@tauri-apps/plugin-dialog';
import type {
  AppError,
  CheckReport,
  ConnectRequest,
  ConnectionStatus,
  ConnectionView,
  DeepworkSettings,
  Notice,
  ErrorCode,
  FolderChanged,
  FolderInfo,
  Prefs,
  RunRequest,
  RunSummary,
  RunUpdate,
  RunView,
  SelectionSize,
  SettingsView,
  TreeEntry,
  WriteOutcome,
} from './generated/types';

import type {
  Answer,
  Budget,
  Decision,
  Event as ConveyorEvent,
  Level,
  Line,
  LineDetail,
  LineDiff,
  NewLine,
  NewProject,
  Outbox,
  OutboxItem,
  Preflight,
  Project,
  Question,
  Review,
  Run,
  Transcript,
  ErrorCode as DaemonErrorCode,
} from './generated/conveyor';

export type * from './generated/types';

export class IpcError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field: string | null,
    /** The daemon's own code, when the daemon refused. */
    readonly daemonCode: DaemonErrorCode | null = null,
  ) {
    super(message);
  }
}

function isAppError(e: unknown): e is AppError {
  return typeof e === 'object' && e !== null && 'code' in e && 'message' in e;
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    if (isAppError(e)) throw new IpcError(e.code, e.message, e.field, e.daemon_code ?? null);
    throw new IpcError('internal', String(e), null);
  }
}

export const folder = {
  open(path: string, onChange: (c: FolderChanged) => void): Promise<FolderInfo> {
    const channel = new Channel<FolderChanged>();
    channel.onmessage = onChange;
    return call('open_folder', { path, onChange: channel });
  },
  initial: () => call<string | null>('initial_folder'),
  list: (dir: string) => call<TreeEntry[]>('list_dir', { dir }),
  selectionSize: (files: string[]) => call<SelectionSize>('selection_size', { files }),
  async pick(): Promise<string | null> {
    const picked = await openDialog({ directory: true, multiple: false });
    return typeof picked === 'string' ? picked : null;
  },
  onDropped: (handler: (path: string) => void): Promise<UnlistenFn> =>
    listen<string>('folder-dropped', (e) => handler(e.payload)),
};

export const deepwork = {
  start(request: RunRequest, onUpdate: (u: RunUpdate) => void): Promise<number> {
    const channel = new Channel<RunUpdate>();
    channel.onmessage = onUpdate;
    return call('start_run', { request, onUpdate: channel });
  },
  stop: (id: number) => call<void>('stop_run', { id }),
  write: (id: number, path: string, force: boolean) =>
    call<WriteOutcome>('write_proposed', { id, path, force }),
  runs: () => call<RunSummary[]>('list_runs'),
  run: (id: number) => call<RunView>('get_run', { id }),
};

export const settings = {
  get: () => call<SettingsView>('get_settings'),
  save: (s: DeepworkSettings) => call<SettingsView>('save_settings', { settings: s }),
  check: () => call<CheckReport>('check_settings'),
  prefs: () => call<Prefs>('get_prefs'),
  savePrefs: (prefs: Prefs) => call<void>('save_prefs', { prefs }),
};

// The conveyor daemon: embedded in the app or remote, the same calls either way. Errors carry
// the codes `not_connected`, `daemon_unreachable`, `unauthorized`, `version_mismatch`,
// `unmerged`, `invalid_state`, `daemon` (the message says what the daemon answered).
export const conveyor = {
  status: () => call<ConnectionStatus>('conveyor_status'),
  connection: () => call<ConnectionView>('conveyor_connection'),
  connect: (request: ConnectRequest) => call<ConnectionStatus>('conveyor_connect', { request }),
  onStatus: (handler: (s: ConnectionStatus) => void): Promise<UnlistenFn> =>
    listen<ConnectionStatus>('conveyor-status', (e) => handler(e.payload)),
  /** Every event of the daemon's `/api/events`, forwarded as it arrives. */
  onEvent: (handler: (e: ConveyorEvent) => void): Promise<UnlistenFn> =>
    listen<ConveyorEvent>('conveyor-event', (e) => handler(e.payload)),
  /** The event stream was down and came back: events may have been missed. */
  onResync: (handler: () => void): Promise<UnlistenFn> => listen('conveyor-resync', () => handler()),
  projects: () => call<Project[]>('conveyor_projects'),
  createProject: (project: NewProject) => call<Project>('conveyor_create_project', { project }),
  lines: () => call<Line[]>('conveyor_lines'),
  line: (id: string) => call<LineDetail>('conveyor_line', { id }),
  diff: (id: string) => call<LineDiff>('conveyor_line_diff', { id }),
  /** The line's runs, oldest first. */
  runs: (id: string) => call<Run[]>('conveyor_line_runs', { id }),
  /** A run's conversation after `after` (a page; `done` once the run ended and none is left). */
  transcript: (runId: number, after: number) =>
    call<Transcript>('conveyor_transcript', { runId, after }),
  createLine: (line: NewLine) => call<Line>('conveyor_create_line', { line }),
  setPriority: (id: string, priority: number) =>
    call<Line>('conveyor_set_priority', { id, priority }),
  /** Puts the queued lines `ids` in this order, first to start first (one `PUT
   * /api/lines/order`); resolves to them in it, with their new priorities. Refused when a line
   * is no longer queued (`invalid_state`), listed twice (`duplicate_line`) or gone (`unknown_line`). */
  reorder: (ids: string[]) => call<Line[]>('conveyor_reorder', { ids }),
  /** Raises the line's level (light → medium → full); a lower one is refused (the daemon's
   * `level_lower`), as is any once the line's checks are over (`invalid_state`). */
  raiseLevel: (id: string, level: Level) => call<Line>('conveyor_raise_level', { id, level }),
  cancel: (id: string) => call<Line>('conveyor_cancel', { id }),
  accept: (id: string) => call<Line>('conveyor_accept', { id }),
  remarks: (id: string, text: string) => call<Line>('conveyor_remarks', { id, text }),
  review: () => call<Review>('conveyor_review'),
  answer: (id: string, answer: Answer) => call<Question>('conveyor_answer', { id, answer }),
  /** Takes an answer back while its `answer` step has not started (after: the daemon's
   * `answer_started`); resolves to the question as it was before the answer. */
  takeBack: (id: string) => call<Question>('conveyor_take_back', { id }),
  /** The "decided without Anton" catalogue, newest first: of `project` (of all without one),
   * at most `limit` (the daemon's 200 without one; out of 1–1000 it refuses, `bad_request`). */
  decisions: (project: string | null, limit: number | null = null) =>
    call<Decision[]>('conveyor_decisions', { project, limit }),
  budget: () => call<Budget>('conveyor_budget'),
  /** Runs the daemon's preflight now: what would stop a step, item by item. */
  preflight: () => call<Preflight>('conveyor_preflight'),
  /** What the daemon tells Anton outside the app: the Catcher and PlanFix, configured or not,
   * and the outbox's messages with their counts. */
  outbox: () => call<Outbox>('conveyor_outbox'),
  /** Queues a test message to the Catcher (sent even at night); without a `[catcher]` the
   * daemon refuses with `catcher_off`. */
  outboxTest: () => call<OutboxItem>('conveyor_outbox_test'),
  /** Shows an OS notification (tauri-plugin-notification). */
  notify: (notice: Notice) => call<void>('conveyor_notify', { notice }),
};
