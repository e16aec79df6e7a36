import { describe, expect, it } from 'vitest';
import { ACTION_MAX, clip, denialAction } from './guard';

describe('a denied call', () => {
  it('reads as the Bash command it would have run', () => {
    expect(denialAction({ tool_name: 'Bash', input: { command: 'npm publish', description: 'release' } })).toBe('npm publish');
    expect(denialAction({ tool_name: 'Bash', input: { command: '  cargo publish\n' } })).toBe('cargo publish');
  });

  it('reads as the file a Write or Edit would have touched', () => {
    expect(denialAction({ tool_name: 'Write', input: { file_path: '/srv/prod/.env', content: 'TOKEN=x' } })).toBe('/srv/prod/.env');
    expect(denialAction({ tool_name: 'Edit', input: { file_path: 'src/a.rs', old_string: 'a', new_string: 'b' } })).toBe('src/a.rs');
  });

  it('a URL, else the input as compact JSON, a string as itself, nothing as empty', () => {
    expect(denialAction({ tool_name: 'WebFetch', input: { url: 'https://pay.example/charge', prompt: 'pay' } })).toBe(
      'https://pay.example/charge',
    );
    expect(denialAction({ tool_name: 'mcp__mail__send', input: { to: 'boss@example.com' } })).toBe('{"to":"boss@example.com"}');
    expect(denialAction({ tool_name: 'Bash', input: { command: '' } })).toBe('{"command":""}');
    expect(denialAction({ tool_name: 'X', input: 'raw text' })).toBe('raw text');
    expect(denialAction({ tool_name: 'X', input: null })).toBe('');
    expect(denialAction({ tool_name: 'X', input: undefined })).toBe('');
  });

  it('a long action is cut with an ellipsis', () => {
    expect(clip('npm publish')).toBe('npm publish');
    const long = 'x'.repeat(ACTION_MAX + 50);
    expect(clip(long)).toHaveLength(ACTION_MAX);
    expect(clip(long).endsWith('…')).toBe(true);
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('abcd', 4)).toBe('abcd');
  });
});
