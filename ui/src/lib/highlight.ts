// A line's diff, parsed from its unified patch and highlighted line by line with highlight.js.
// Only a handful of languages are registered (by file extension); everything else is shown as
// escaped plain text. hljs escapes what it highlights, so every `html` here is safe to insert.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import ini from 'highlight.js/lib/languages/ini';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';

hljs.registerLanguage('bash', bash);
hljs.registerLanguage('css', css);
hljs.registerLanguage('ini', ini);
hljs.registerLanguage('javascript', javascript);
hljs.registerLanguage('json', json);
hljs.registerLanguage('markdown', markdown);
hljs.registerLanguage('python', python);
hljs.registerLanguage('rust', rust);
hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('xml', xml);

const byExtension: Record<string, string> = {
  rs: 'rust',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  json: 'json',
  toml: 'ini',
  ini: 'ini',
  md: 'markdown',
  sh: 'bash',
  bash: 'bash',
  py: 'python',
  css: 'css',
  html: 'xml',
  htm: 'xml',
  svelte: 'xml',
  xml: 'xml',
};

/** The highlight.js language for a path, by its extension (either `/` or `\` separated). */
export function languageOf(path: string): string | null {
  const name = path.split(/[\\/]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return byExtension[name.slice(dot + 1).toLowerCase()] ?? null;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** One content line's code as escaped HTML, highlighted when the language is known. */
export function highlightLine(text: string, language: string | null): string {
  if (!language || !hljs.getLanguage(language) || text.length > 2000) return escapeHtml(text);
  try {
    return hljs.highlight(text, { language, ignoreIllegals: true }).value;
  } catch {
    return escapeHtml(text);
  }
}

export type RowKind = 'hunk' | 'add' | 'del' | 'ctx' | 'meta';

export interface DiffRow {
  kind: RowKind;
  /** Line number in the old file, for context and removed lines. */
  old: number | null;
  /** Line number in the new file, for context and added lines. */
  new: number | null;
  /** The line's text without its `+`/`-`/` ` tag (hunk headers and notes: the whole line). */
  text: string;
  /** Escaped, highlighted HTML of `text` (plain escaped text for headers and notes). */
  html: string;
}

/** Past this many lines a file's diff is shown without highlighting (it stays correct). */
const HIGHLIGHT_LIMIT = 3000;

/** Parses a file's unified hunks (`@@ -a,b +c,d @@` headers and tagged lines) into rows. */
export function parsePatch(patch: string, language: string | null): DiffRow[] {
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const lang = lines.length > HIGHLIGHT_LIMIT ? null : language;
  const rows: DiffRow[] = [];
  let oldN = 0;
  let newN = 0;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (header) {
      oldN = Number(header[1]);
      newN = Number(header[2]);
      rows.push({ kind: 'hunk', old: null, new: null, text: line, html: escapeHtml(line) });
      continue;
    }
    const tag = line[0];
    const text = line.slice(1);
    if (tag === '+') {
      rows.push({ kind: 'add', old: null, new: newN++, text, html: highlightLine(text, lang) });
    } else if (tag === '-') {
      rows.push({ kind: 'del', old: oldN++, new: null, text, html: highlightLine(text, lang) });
    } else if (tag === ' ' || line === '') {
      rows.push({ kind: 'ctx', old: oldN++, new: newN++, text, html: highlightLine(text, lang) });
    } else {
      // "\ No newline at end of file", or a header line the daemon left in.
      rows.push({ kind: 'meta', old: null, new: null, text: line, html: escapeHtml(line) });
    }
  }
  return rows;
}
