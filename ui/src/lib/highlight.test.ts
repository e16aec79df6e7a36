import { describe, expect, it } from 'vitest';
import { escapeHtml, highlightLine, languageOf, parsePatch } from './highlight';

describe('languageOf', () => {
  it('knows a handful of languages by extension', () => {
    expect(languageOf('crates/conveyor/src/lib.rs')).toBe('rust');
    expect(languageOf('ui\\src\\App.TS')).toBe('typescript');
    expect(languageOf('Cargo.toml')).toBe('ini');
    expect(languageOf('scripts/test.sh')).toBe('bash');
    expect(languageOf('README')).toBeNull();
    expect(languageOf('image.png')).toBeNull();
  });
});

describe('parsePatch', () => {
  const patch = [
    '@@ -1,3 +1,4 @@ fn main',
    ' fn main() {',
    '-    let x = 1;',
    '+    let x = 2;',
    '+    let s = "<script>alert(1)</script>";',
    ' }',
    '\\ No newline at end of file',
    '',
  ].join('\n');

  it('numbers old and new lines from the hunk header and tags each line', () => {
    const rows = parsePatch(patch, 'rust');
    expect(rows.map((r) => [r.kind, r.old, r.new])).toEqual([
      ['hunk', null, null],
      ['ctx', 1, 1],
      ['del', 2, null],
      ['add', null, 2],
      ['add', null, 3],
      ['ctx', 3, 4],
      ['meta', null, null],
    ]);
    expect(rows[2].text).toBe('    let x = 1;');
  });

  it('highlights code and escapes everything', () => {
    const rows = parsePatch(patch, 'rust');
    expect(rows[1].html).toContain('<span class="hljs-keyword">fn</span>');
    expect(rows[4].html).not.toContain('<script>');
    expect(rows[4].html).toContain('&lt;script&gt;');
    expect(parsePatch('@@ -0,0 +1 @@\n+<b>x</b>\n', null)[1].html).toBe('&lt;b&gt;x&lt;/b&gt;');
  });

  it('unknown languages and odd input fall back to escaped text', () => {
    expect(highlightLine('<a & b>', 'cobol')).toBe(escapeHtml('<a & b>'));
    expect(escapeHtml(`"'&<>`)).toBe('&quot;&#39;&amp;&lt;&gt;');
  });
});
