// Generated from the Rust types by src-tauri/src/bindings.rs. Do not edit:
// run `UPDATE_BINDINGS=1 cargo test -p pult bindings` after changing them.

import type { ErrorCode as DaemonErrorCode } from './conveyor';

export type ErrorCode = "no_folder" | "folder_unavailable" | "path_refused" | "config_broken" | "config_invalid" | "transport" | "run_not_found" | "not_proposed" | "write_failed" | "history" | "not_connected" | "daemon_unreachable" | "unauthorized" | "version_mismatch" | "unmerged" | "invalid_state" | "daemon" | "internal";

export type AppError = { 
/**
 * What kind.
 */
code: ErrorCode, 
/**
 * For people.
 */
message: string, 
/**
 * The config key to fix, when one is to blame.
 */
field: string | null, 
/**
 * The daemon's own code when the daemon refused (so the page words it in the
 * interface's language, with `message`, the daemon's text, beneath).
 */
daemon_code: DaemonErrorCode | null, };

export type TreeEntry = { 
/**
 * The last component.
 */
name: string, 
/**
 * Relative to the folder, with `/`.
 */
path: string, 
/**
 * A folder.
 */
dir: boolean, 
/**
 * For folders: files below it (ignored files not counted).
 */
files: number, };

export type FolderInfo = { 
/**
 * The canonical path.
 */
root: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Files in it (ignored ones not counted).
 */
files: number, 
/**
 * Whether changes on disk are followed (until a [`FolderChanged`] says otherwise).
 */
watching: boolean, };

export type FolderChanged = { 
/**
 * Files now.
 */
files: number, 
/**
 * Whether changes on disk are followed.
 */
watching: boolean, };

export type SelectionSize = { 
/**
 * Characters of the readable text files.
 */
chars: number, 
/**
 * Files counted.
 */
files: number, 
/**
 * Files that will not be sent whole: missing, binary, or refused.
 */
skipped: Array<string>, };

export type RunRequest = { 
/**
 * The question.
 */
question: string, 
/**
 * Ticked files, relative to the open folder.
 */
files: Array<string>, };

export type RunUpdate = { "kind": "event", 
/**
 * The event.
 */
event: Event, } | { "kind": "done", 
/**
 * The whole run.
 */
run: RunView, } | { "kind": "failed", 
/**
 * Why.
 */
error: AppError, };

export type ProposedView = { 
/**
 * Relative path as proposed.
 */
path: string, 
/**
 * Cut off in the answer: never writable.
 */
truncated: boolean, 
/**
 * Whether the file exists on disk now.
 */
exists: boolean, 
/**
 * The file on disk changed since the answer arrived.
 */
changed_on_disk: boolean, 
/**
 * Why the path may not be written, if it may not.
 */
refused: string | null, 
/**
 * Against the file on disk now.
 */
hunks: Array<DiffHunk>, 
/**
 * The last write of this file in this run.
 */
written: WriteRecord | null, };

export type RunView = { 
/**
 * Id, folder, question, stop reason…
 */
summary: RunSummary, 
/**
 * Ticked files.
 */
files: Array<string>, 
/**
 * The steps.
 */
steps: Array<Step>, 
/**
 * The final answer.
 */
answer: string | null, 
/**
 * The answer with each FILE block replaced by a line naming the file (shown below it).
 */
prose: string | null, 
/**
 * Proposed files.
 */
proposed: Array<ProposedView>, 
/**
 * Every write.
 */
writes: Array<WriteRecord>, };

export type WriteOutcome = { "kind": "written", 
/**
 * The write.
 */
record: WriteRecord, } | { "kind": "changed_on_disk", 
/**
 * The path.
 */
path: string, };

export type RunSummary = { 
/**
 * The id.
 */
id: number, 
/**
 * The project folder.
 */
folder: string, 
/**
 * The question.
 */
question: string, 
/**
 * When it started (RFC 3339).
 */
started_at: string, 
/**
 * Why it ended; `None` while running or after an error.
 */
stop_reason: StopReason | null, 
/**
 * Steps taken.
 */
steps: number, 
/**
 * The error, if it failed.
 */
error: string | null, };

export type WriteRecord = { 
/**
 * Relative path.
 */
path: string, 
/**
 * Where the old version went, if there was one.
 */
backup: string | null, 
/**
 * When (RFC 3339).
 */
written_at: string, };

export type DiffLine = { 
/**
 * `" "`, `"+"` or `"-"`.
 */
tag: string, 
/**
 * Line number in the old file (1-based), for context and removed lines.
 */
old: number | null, 
/**
 * Line number in the new file (1-based), for context and added lines.
 */
new: number | null, 
/**
 * The text without its line ending.
 */
text: string, };

export type DiffHunk = { 
/**
 * The lines.
 */
lines: Array<DiffLine>, };

export type DeepworkSettings = { 
/**
 * `"bridge"` or `"openai"`.
 */
transport: string, 
/**
 * Path of ask.mjs.
 */
bridge: string, 
/**
 * The bridge's chat.
 */
chat: string, 
/**
 * Steps per run; `null` for deepwork's default (the key stays out of the file).
 */
steps: number | null, 
/**
 * The node binary.
 */
node: string, 
/**
 * Seconds per step; `null` for deepwork's default.
 */
timeout_secs: number | null, 
/**
 * OpenAI-compatible endpoint.
 */
base_url: string, 
/**
 * Its model.
 */
model: string, 
/**
 * The environment variable with its key.
 */
api_key_env: string, };

export type SettingsView = { 
/**
 * Where config.json lives.
 */
path: string, 
/**
 * Whether it exists yet.
 */
exists: boolean, 
/**
 * What it says (defaults where it says nothing).
 */
settings: DeepworkSettings, 
/**
 * Why the file on disk cannot be used, if it cannot.
 */
error: AppError | null, 
/**
 * What deepwork uses for what the file leaves out (the form's placeholders).
 */
defaults: DeepworkDefaults, };

export type DeepworkDefaults = { 
/**
 * Steps per run when `steps` is unset.
 */
steps: number, 
/**
 * The most steps deepwork accepts.
 */
max_steps: number, 
/**
 * Seconds per step when `timeout_secs` is unset.
 */
timeout_secs: number, 
/**
 * The bridge's chat when `chat` is unset.
 */
chat: string, };

export type Prefs = { 
/**
 * `"ru"` or `"en"`.
 */
language: string, };

export type ConnectionMode = "embedded" | "remote";

export type ConnectionState = "starting" | "connected" | "unreachable" | "unauthorized" | "version_mismatch" | "failed";

export type ConnectionStatus = { mode: ConnectionMode, 
/**
 * The daemon's base URL (for the embedded one: its loopback address), once known.
 */
url: string | null, state: ConnectionState, 
/**
 * What went wrong, for people.
 */
message: string | null, 
/**
 * The daemon's version, from `/api/health`.
 */
daemon_version: string | null, };

export type TokenStore = "keyring" | "file";

export type ConnectionView = { mode: ConnectionMode, url: string | null, 
/**
 * A token is stored for the remote daemon.
 */
token_set: boolean, 
/**
 * Where it is stored.
 */
token_store: TokenStore | null, 
/**
 * The embedded daemon's optional config file (`conveyor.toml` keys: `claude_bin`,
 * `slots`, `budget`, …); its data folder.
 */
embedded_config: string, embedded_data: string, };

export type ConnectRequest = { mode: ConnectionMode, 
/**
 * Required for `remote`.
 */
url: string | null, 
/**
 * A new token for `remote`; `None` keeps the stored one.
 */
token: string | null, };

export type Notice = { title: string, body: string, };

export type Event = { "event": "step_started", 
/**
 * Step number.
 */
n: number, 
/**
 * Whether it goes as a new message of the chat.
 */
new: boolean, 
/**
 * Characters sent.
 */
sent_chars: number, } | { "event": "answer_received", 
/**
 * Step number.
 */
n: number, 
/**
 * Characters.
 */
answer_chars: number, 
/**
 * How many requests it holds.
 */
requests: number, 
/**
 * How many files it proposes.
 */
files: number, } | { "event": "request_executed", 
/**
 * Step number of the answer.
 */
n: number, 
/**
 * NEED, LIST or FIND.
 */
kind: RequestKind, 
/**
 * The request's argument as written.
 */
arg: string, 
/**
 * LIST and FIND: matches found before any cut; NEED: files sent (whole or cut).
 */
hits: number, 
/**
 * Whether anything was cut.
 */
truncated: boolean, 
/**
 * NEED: files already sent whole in this run and unchanged since, answered with a line
 * instead of the file.
 */
unchanged: number, 
/**
 * NEED: files sent again because they changed on disk since a step sent them (counted
 * in `hits` too).
 */
changed: number, } | { "event": "finished", 
/**
 * Why.
 */
stop_reason: StopReason, 
/**
 * Steps taken.
 */
steps: number, };

export type Step = { 
/**
 * 1-based.
 */
n: number, 
/**
 * Sent as a new message of the chat (`--new`), not as an edit of the first.
 */
new: boolean, 
/**
 * Characters sent.
 */
sent_chars: number, 
/**
 * Characters of the answer.
 */
answer_chars: number, 
/**
 * The answer's requests.
 */
requests: Array<StepRequest>, };

export type StepRequest = { 
/**
 * NEED, LIST or FIND.
 */
kind: RequestKind, 
/**
 * As written.
 */
arg: string, 
/**
 * Matches or files; `None` when not run.
 */
hits: number | null, 
/**
 * Whether anything was cut.
 */
truncated: boolean, 
/**
 * NEED: files answered "unchanged since step k" instead of being sent again (runs saved
 * before this count existed read 0).
 */
unchanged: number, 
/**
 * NEED: files sent again, marked "changed on disk since step k".
 */
changed: number, };

export type StopReason = "no_requests" | "steps_exhausted" | "loop";

export type RequestKind = "NEED" | "LIST" | "FIND";

export type RequestStat = { 
/**
 * NEED, LIST or FIND.
 */
kind: RequestKind, 
/**
 * The request's argument as written.
 */
arg: string, 
/**
 * LIST and FIND: matches found before any cut; NEED: files sent (whole or cut).
 */
hits: number, 
/**
 * Whether anything was cut.
 */
truncated: boolean, 
/**
 * NEED: files already sent whole in this run and unchanged since, answered with a line
 * instead of the file.
 */
unchanged: number, 
/**
 * NEED: files sent again because they changed on disk since a step sent them (counted
 * in `hits` too).
 */
changed: number, };

export type CheckReport = { 
/**
 * The items.
 */
items: Array<CheckItem>, };

export type CheckItem = { 
/**
 * What was checked.
 */
name: string, 
/**
 * Whether it is fine.
 */
ok: boolean, 
/**
 * What was found, or what to fix.
 */
detail: string, 
/**
 * Local or transport.
 */
kind: CheckKind, };

export type CheckKind = "local" | "transport";
