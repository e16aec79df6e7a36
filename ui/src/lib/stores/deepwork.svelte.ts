// State of the Deepwork page: the open folder and its lazily loaded tree, the ticked files,
// the question, the run in progress (its step log, fed by a channel), the finished run and
// the history. The backend does the work; this only keeps what the page shows.
import {
  deepwork as api,
  folder as folderApi,
  IpcError,
  type Event,
  type FolderInfo,
  type RunSummary,
  type RunUpdate,
  type RunView,
  type SelectionSize,
  type TreeEntry,
  type WriteOutcome,
} from '../ipc';

export type LogEntry = { kind: 'event'; event: Event } | { kind: 'failed'; message: string };
export type Row = { entry: TreeEntry; depth: number };
export type WriteState =
  | { kind: 'busy' }
  | { kind: 'done'; outcome: WriteOutcome }
  | { kind: 'error'; error: IpcError };

function asIpcError(e: unknown): IpcError {
  return e instanceof IpcError ? e : new IpcError('internal', String(e), null);
}

export class DeepworkStore {
  folder = $state<FolderInfo | null>(null);
  children = $state<Record<string, TreeEntry[]>>({});
  expanded = $state<Record<string, boolean>>({});
  checked = $state<Record<string, boolean>>({});
  question = $state('');
  runId = $state<number | null>(null);
  log = $state<LogEntry[]>([]);
  run = $state<RunView | null>(null);
  error = $state<IpcError | null>(null);
  selection = $state<SelectionSize | null>(null);
  history = $state<RunSummary[]>([]);
  writes = $state<Record<string, WriteState>>({});
  refreshedAt = $state<number | null>(null);

  rows: Row[] = $derived.by(() => {
    const out: Row[] = [];
    const walk = (dir: string, depth: number) => {
      for (const entry of this.children[dir] ?? []) {
        out.push({ entry, depth });
        if (entry.dir && this.expanded[entry.path]) walk(entry.path, depth + 1);
      }
    };
    walk('', 0);
    return out;
  });

  tickedFiles: string[] = $derived(
    Object.entries(this.checked)
      .filter(([, v]) => v)
      .map(([k]) => k)
      .sort(),
  );

  running = $derived(this.runId !== null);

  async openFolder(path: string): Promise<void> {
    this.error = null;
    try {
      const info = await folderApi.open(path, (c) => void this.refresh(c.files, c.watching));
      this.folder = info;
      this.children = {};
      this.expanded = {};
      this.checked = {};
      this.selection = null;
      this.children[''] = await folderApi.list('');
    } catch (e) {
      this.error = asIpcError(e);
    }
  }

  /** Files changed on disk: reload every listing the page shows. */
  async refresh(files: number, watching: boolean): Promise<void> {
    if (!this.folder) return;
    this.folder = { ...this.folder, files, watching };
    const dirs = ['', ...Object.keys(this.expanded).filter((d) => this.expanded[d])];
    const loaded = await Promise.all(dirs.map((d) => folderApi.list(d).catch(() => [])));
    const next: Record<string, TreeEntry[]> = {};
    dirs.forEach((d, i) => (next[d] = loaded[i]));
    this.children = next;
    this.refreshedAt = Date.now();
    void this.measure();
  }

  async toggle(dir: string): Promise<void> {
    if (this.expanded[dir]) {
      this.expanded[dir] = false;
      return;
    }
    if (!this.children[dir]) this.children[dir] = await folderApi.list(dir);
    this.expanded[dir] = true;
  }

  tick(path: string, on: boolean): void {
    this.checked[path] = on;
    void this.measure();
  }

  async measure(): Promise<void> {
    const files = this.tickedFiles;
    if (files.length === 0) {
      this.selection = null;
      return;
    }
    try {
      this.selection = await folderApi.selectionSize(files);
    } catch (e) {
      this.error = asIpcError(e);
    }
  }

  async ask(): Promise<void> {
    if (this.running || !this.question.trim()) return;
    this.error = null;
    this.log = [];
    this.run = null;
    this.writes = {};
    try {
      this.runId = await api.start({ question: this.question, files: this.tickedFiles }, (u) =>
        this.onUpdate(u),
      );
    } catch (e) {
      this.error = asIpcError(e);
    }
  }

  onUpdate(u: RunUpdate): void {
    switch (u.kind) {
      case 'event':
        this.log.push({ kind: 'event', event: u.event });
        break;
      case 'done':
        this.run = u.run;
        this.runId = null;
        void this.loadHistory();
        break;
      case 'failed':
        this.log.push({ kind: 'failed', message: u.error.message });
        this.error = new IpcError(u.error.code, u.error.message, u.error.field);
        this.runId = null;
        void this.loadHistory();
        break;
    }
  }

  async stop(): Promise<void> {
    if (this.runId === null) return;
    try {
      await api.stop(this.runId);
    } catch (e) {
      this.error = asIpcError(e);
    }
  }

  async write(path: string, force = false): Promise<void> {
    if (!this.run) return;
    const id = this.run.summary.id;
    this.writes[path] = { kind: 'busy' };
    try {
      const outcome = await api.write(id, path, force);
      this.writes[path] = { kind: 'done', outcome };
      if (outcome.kind === 'written') this.run = await api.run(id);
    } catch (e) {
      this.writes[path] = { kind: 'error', error: asIpcError(e) };
    }
  }

  async loadHistory(): Promise<void> {
    try {
      this.history = await api.runs();
    } catch (e) {
      this.error = asIpcError(e);
    }
  }

  async reopen(id: number): Promise<void> {
    try {
      const run = await api.run(id);
      this.run = run;
      this.log = [];
      this.writes = {};
      this.question = run.summary.question;
    } catch (e) {
      this.error = asIpcError(e);
    }
  }
}

export const deepworkStore = new DeepworkStore();
