import { describe, expect, it } from 'vitest';
import { CHECKERS, LEVELS, findingText, higherLevels, isChecker, raisableLevels, shortId } from './roles';

describe('levels', () => {
  it('go light, medium, full', () => {
    expect(LEVELS).toEqual(['light', 'medium', 'full']);
  });

  it('only higher ones are offered; all of them before the planner chose one', () => {
    expect(higherLevels(null)).toEqual(['light', 'medium', 'full']);
    expect(higherLevels('light')).toEqual(['medium', 'full']);
    expect(higherLevels('medium')).toEqual(['full']);
    expect(higherLevels('full')).toEqual([]);
  });

  it('none once the line merged, was accepted or cancelled', () => {
    expect(raisableLevels({ state: 'running', level: 'light' })).toEqual(['medium', 'full']);
    expect(raisableLevels({ state: 'fixing', level: 'medium' })).toEqual(['full']);
    expect(raisableLevels({ state: 'queued', level: null })).toEqual(['light', 'medium', 'full']);
    for (const state of ['awaiting_acceptance', 'accepted', 'cancelled'] as const) {
      expect(raisableLevels({ state, level: 'light' }), state).toEqual([]);
    }
  });
});

describe('the chain', () => {
  it('checking roles are the tester, reviewer, skeptic and extras', () => {
    expect(CHECKERS).toEqual(['tester', 'reviewer', 'skeptic', 'extra']);
    expect(isChecker('reviewer')).toBe(true);
    expect(isChecker('fixer')).toBe(false);
    expect(isChecker('judge')).toBe(false);
  });

  it('a finding reads path:line: text, with what it has', () => {
    expect(findingText({ path: 'hello.txt', line: 1, text: 'typo: helo should be hello' })).toBe(
      'hello.txt:1: typo: helo should be hello',
    );
    expect(findingText({ path: 'src/lib.rs', text: 'no test' })).toBe('src/lib.rs: no test');
    expect(findingText({ text: 'the README says nothing of it' })).toBe('the README says nothing of it');
    expect(findingText({ path: 'a.rs', line: 0, text: 'top' })).toBe('a.rs:0: top');
  });

  it('a session id is shortened to its first group', () => {
    expect(shortId('3f2a9c1e-7b4d-4e8a-9f00-1234567890ab')).toBe('3f2a9c1e');
    expect(shortId('abc')).toBe('abc');
  });
});
