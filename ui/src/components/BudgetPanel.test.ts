import { cleanup, render, screen } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { i18n } from '../lib/i18n/index.svelte';
import { messages } from '../lib/i18n/messages';
import { budget, budgetPool, calibration, line, runningStep } from '../test/fixtures';
import BudgetPanel from './BudgetPanel.svelte';

beforeEach(() => {
  i18n.lang = 'ru';
});
afterEach(() => cleanup());

const panel = () => screen.getByTestId('budget-panel').textContent ?? '';

describe('BudgetPanel: the steps running now', () => {
  it('shows each step with what it has spent, its claim and its estimate, the bar at its live spend', () => {
    render(BudgetPanel, {
      budget: budget({ running_estimate_usd: 1.2, running: [runningStep({ live_usd: 0.4, claim_usd: 1.2, estimate_usd: 1 })] }),
      lines: [line('a', 'running', { title: 'Checkout page' })],
    });
    const [step] = screen.getAllByTestId('budget-running-step');
    expect(step.dataset.lineId).toBe('a');
    expect(step.textContent).toContain('Checkout page');
    expect(step.textContent).toContain('шаг 2 (исполнитель)');
    expect(step.textContent).toContain('потрачено $0.40 из заявки $1.20 (оценка $1.00)');
    const meter = step.querySelector('meter')!;
    expect(meter.getAttribute('value')).toBe('0.4');
    expect(meter.getAttribute('max')).toBe('1.2');
    expect(step.dataset.over).toBe('false');
    expect(step.classList.contains('over')).toBe(false);
    expect(screen.queryByTestId('budget-overrun')).toBeNull();
    expect(panel()).toContain('идущие шаги: ~$1.20');
  });

  it('marks a step that spent more than its estimate, by how much', () => {
    render(BudgetPanel, {
      budget: budget({
        running: [
          runningStep({ line_id: 'a', live_usd: 1.35, estimate_usd: 1, claim_usd: 1.8 }),
          runningStep({ line_id: 'b', live_usd: 0.2, estimate_usd: 1, claim_usd: 1 }),
        ],
      }),
    });
    const [over, within] = screen.getAllByTestId('budget-running-step');
    expect(over.dataset.over).toBe('true');
    expect(over.classList.contains('over')).toBe(true);
    expect(screen.getAllByTestId('budget-overrun')).toHaveLength(1);
    expect(over.querySelector('[data-testid=budget-overrun]')?.textContent).toBe('шаг идёт сверх своей оценки (на $0.35)');
    expect(within.dataset.over).toBe('false');
  });

  it('names a line the panel was not given by a short id', () => {
    render(BudgetPanel, { budget: budget({ running: [runningStep({ line_id: '3f2a9c1e-7b4d-4e8a-9f00-1234567890ab' })] }) });
    const step = screen.getByTestId('budget-running-step');
    expect(step.textContent).toContain('3f2a9c1e');
    expect(step.textContent).not.toContain('7b4d');
  });

  it('says so when nothing runs', () => {
    render(BudgetPanel, { budget: budget() });
    expect(screen.queryAllByTestId('budget-running-step')).toHaveLength(0);
    expect(screen.getByTestId('budget-running').textContent).toContain('сейчас ни один шаг не идёт');
  });

  it('speaks English when asked', () => {
    i18n.lang = 'en';
    render(BudgetPanel, { budget: budget({ running: [runningStep({ kind: 'reviewer', live_usd: 1.5 })] }) });
    const step = screen.getByTestId('budget-running-step');
    expect(step.textContent).toContain('step 2 (reviewer)');
    expect(step.textContent).toContain('spent $1.50 of claim $1.20 (estimate $1.00)');
    expect(step.textContent).toContain('the step runs over its estimate (by $0.50)');
  });
});

describe("BudgetPanel: the server's view of a pool", () => {
  it('shows the observed size, its spread, the observation count and the proposed threshold', () => {
    render(BudgetPanel, {
      budget: budget({ pools: [budgetPool({ threshold_usd: 37, calibration: calibration() }), budgetPool({ kind: 'monthly' })] }),
    });
    const [window, month] = screen.getAllByTestId('budget-pool');
    expect(window.querySelector('[data-testid=budget-calibration]')?.textContent).toContain(
      'по данным сервера размер ≈ $40.00 ± $3.00 (наблюдений: 12), предлагаемый порог $36.00',
    );
    // No calibration, nothing extra.
    expect(month.querySelector('[data-testid=budget-calibration]')).toBeNull();
    expect(screen.getAllByTestId('budget-calibration')).toHaveLength(1);
  });

  it.each([
    // threshold, proposal, spread → hint
    [36, 36, 3, null],
    [33, 36, 3, null],
    [39, 36, 3, null],
    [32.9, 36, 3, 'below'],
    [39.1, 36, 3, 'above'],
    [36, 36, 0, null],
    [10, 36, 3, 'below'],
    [60, 36, 3, 'above'],
  ] as const)('threshold %s against %s ± %s: hint %s', (threshold, proposed, spread, hint) => {
    render(BudgetPanel, {
      budget: budget({ pools: [budgetPool({ threshold_usd: threshold, calibration: calibration({ proposed_usd: proposed, spread_usd: spread }) })] }),
    });
    const shown = screen.queryByTestId('budget-calibration-hint');
    expect(shown?.dataset.hint ?? null).toBe(hint);
  });

  it('words the hint with the pool, the threshold and the way to follow the server', () => {
    render(BudgetPanel, {
      budget: budget({
        pools: [
          budgetPool({ threshold_usd: 10, calibration: calibration() }),
          budgetPool({ kind: 'weekly', threshold_usd: 200, calibration: calibration({ proposed_usd: 150, spread_usd: 20 }) }),
        ],
      }),
    });
    const [below, above] = screen.getAllByTestId('budget-calibration-hint');
    expect(below.dataset.kind).toBe('window');
    expect(below.textContent?.trim()).toBe(
      '5-часовое окно: заданный порог $10.00 ниже того, что показывает сервер; с threshold_usd = "auto" порог следовал бы за сервером.',
    );
    expect(above.dataset.kind).toBe('weekly');
    expect(above.textContent).toContain('Неделя: заданный порог $200.00 выше того, что показывает сервер');
    expect(above.textContent).toContain('threshold_usd = "auto"');
  });

  it('speaks English when asked', () => {
    i18n.lang = 'en';
    render(BudgetPanel, { budget: budget({ pools: [budgetPool({ threshold_usd: 50, calibration: calibration({ observations: 3 }) })] }) });
    expect(screen.getByTestId('budget-calibration').textContent).toContain(
      "server's view: size ≈ $40.00 ± $3.00 (observations: 3), proposed threshold $36.00",
    );
    expect(screen.getByTestId('budget-calibration-hint').textContent).toContain(
      '5-hour window: the configured threshold $50.00 is above what the server shows',
    );
  });
});

describe('BudgetPanel: messages', () => {
  it('has every budget text in both languages, not empty', () => {
    const keys = Object.keys(messages.ru).filter((k) => k.startsWith('budget.'));
    for (const key of ['budget.runningNone', 'budget.step', 'budget.live', 'budget.claimWhy', 'budget.overrun', 'budget.calibration', 'budget.calibration.below', 'budget.calibration.above']) {
      expect(keys).toContain(key);
    }
    for (const key of keys as (keyof typeof messages.ru)[]) {
      expect(messages.ru[key]?.trim(), key).toBeTruthy();
      expect(messages.en[key]?.trim(), key).toBeTruthy();
    }
  });
});
