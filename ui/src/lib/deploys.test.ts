import { describe, expect, it } from 'vitest';
import { deployMs, failed, healthTally, newestFirst, shortSha } from './deploys';
import { deploy } from '../test/fixtures';

describe('deploys', () => {
  it('a commit is shortened as git does', () => {
    expect(shortSha('0123456789abcdef0123456789abcdef01234567')).toBe('0123456');
    expect(shortSha('abc')).toBe('abc');
  });

  it('rolled back and red are failures; green and running are not', () => {
    expect(failed({ outcome: 'rolled_back' })).toBe(true);
    expect(failed({ outcome: 'red' })).toBe(true);
    expect(failed({ outcome: 'green' })).toBe(false);
    expect(failed({ outcome: 'running' })).toBe(false);
  });

  it('the health tries are tallied, the last one said', () => {
    expect(healthTally([])).toEqual({ tries: 0, ok: 0, lastOk: null });
    const at = '2026-12-01T10:00:10Z';
    expect(
      healthTally([
        { at, ok: false, output_tail: '502' },
        { at, ok: false, output_tail: '502' },
        { at, ok: true, output_tail: '200' },
      ]),
    ).toEqual({ tries: 3, ok: 1, lastOk: true });
    expect(healthTally([{ at, ok: true, output_tail: '' }, { at, ok: false, output_tail: '' }]).lastOk).toBe(false);
  });

  it('takes from start to end; nothing while running or when a time does not parse', () => {
    expect(deployMs(deploy())).toBe(90000);
    expect(deployMs(deploy({ finished_at: null, outcome: 'running' }))).toBeNull();
    expect(deployMs(deploy({ started_at: 'garbage' }))).toBeNull();
    expect(deployMs(deploy({ finished_at: '2026-12-01T09:00:00Z' }))).toBeNull();
  });

  it('are shown latest first, the daemon’s list left as it was', () => {
    const list = [deploy({ commit: 'a' }), deploy({ commit: 'b' })];
    expect(newestFirst(list).map((d) => d.commit)).toEqual(['b', 'a']);
    expect(list.map((d) => d.commit)).toEqual(['a', 'b']);
  });
});
