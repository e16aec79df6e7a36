import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { flush } from '../test/flush';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeepworkSettings, SettingsView } from '../lib/ipc';

// The settings client mocked beside the conveyor one (Settings shows both).
vi.mock('../lib/ipc', async (orig) => {
  const real = (await orig()) as typeof import('../lib/ipc');
  const base = (await import('../test/conveyor-ipc')).mockIpc(real);
  const settings = Object.fromEntries(Object.keys(real.settings).map((k) => [k, vi.fn()]));
  return { ...base, settings };
});
const ipc = await import('../lib/ipc');
const api = ipc.settings as unknown as Record<keyof typeof ipc.settings, ReturnType<typeof vi.fn>>;
const conveyor = ipc.conveyor as unknown as Record<string, ReturnType<typeof vi.fn>>;
const { i18n } = await import('../lib/i18n/index.svelte');
const Settings = (await import('./Settings.svelte')).default;

const unset: DeepworkSettings = {
  transport: 'bridge',
  bridge: '',
  chat: '',
  steps: null,
  node: '',
  timeout_secs: null,
  base_url: '',
  model: '',
  api_key_env: '',
};
// Not deepwork's real defaults on purpose: the page must show what it is sent.
const viewOf = (settings: DeepworkSettings): SettingsView => ({
  path: '/home/a/.config/deepwork/config.json',
  exists: false,
  settings,
  error: null,
  defaults: { steps: 7, max_steps: 50, timeout_secs: 1234, chat: 'deep' },
});

beforeEach(() => {
  vi.resetAllMocks();
  i18n.lang = 'ru';
  conveyor.connection.mockResolvedValue({ mode: 'embedded', url: null, token_set: false, token_store: null, embedded_config: '/c', embedded_data: '/d' });
  api.get.mockResolvedValue(viewOf(unset));
  api.save.mockImplementation(async (s: DeepworkSettings) => viewOf(s));
});
afterEach(() => cleanup());

describe('Settings page', () => {
  const input = (id: string) => screen.getByTestId(id) as HTMLInputElement;

  it('shows the defaults it is sent as placeholders, never 0, and saves nothing for them', async () => {
    render(Settings);
    await flush();
    expect([input('steps').value, input('steps').placeholder]).toEqual(['', '7']);
    expect([input('timeout').value, input('timeout').placeholder]).toEqual(['', '1234']);
    expect(input('chat').placeholder).toBe('deep');
    await fireEvent.click(screen.getByTestId('save-settings'));
    await flush();
    expect(api.save).toHaveBeenCalledWith(unset);
    expect(input('steps').value).toBe('');
  });

  it('saves a number that is typed, and nothing again once it is cleared', async () => {
    api.get.mockResolvedValue(viewOf({ ...unset, steps: 6 }));
    render(Settings);
    await flush();
    expect(input('steps').value).toBe('6');
    await fireEvent.input(input('timeout'), { target: { value: '60' } });
    await fireEvent.input(input('steps'), { target: { value: '' } });
    await fireEvent.click(screen.getByTestId('save-settings'));
    await flush();
    expect(api.save).toHaveBeenLastCalledWith({ ...unset, steps: null, timeout_secs: 60 });
  });
});
