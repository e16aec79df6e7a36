// Small formatters for the conveyor pages, in the current language.
import { i18n, t } from './i18n/index.svelte';

const locale = () => (i18n.lang === 'ru' ? 'ru-RU' : 'en-US');

/** USD as the CLI reports it (a proxy, not a bill): two decimals, more for tiny sums. */
export function usd(n: number): string {
  const digits = n !== 0 && Math.abs(n) < 0.01 ? 4 : 2;
  return `$${n.toFixed(digits)}`;
}

export function duration(ms: number | null): string {
  if (ms === null) return '—';
  const total = Math.round(ms / 1000);
  if (total < 60) return t('fmt.seconds', { s: total });
  if (total < 3600) return t('fmt.minutes', { m: Math.floor(total / 60), s: total % 60 });
  return t('fmt.hours', { h: Math.floor(total / 3600), m: Math.floor((total % 3600) / 60) });
}

/** A size in bytes, KB (1024) or MB, one decimal above a thousand bytes. */
export function bytes(n: number): string {
  if (n < 1024) return t('fmt.bytes', { n });
  const round = (x: number) => Math.round(x * 10) / 10;
  if (n < 1024 * 1024) return t('fmt.kib', { n: round(n / 1024) });
  return t('fmt.mib', { n: round(n / (1024 * 1024)) });
}

/** An RFC 3339 time as local date and time; the text itself when it does not parse. */
export function when(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(locale(), { dateStyle: 'short', timeStyle: 'short' });
}

/** As [`when`], to the second: health-check tries are seconds apart. */
export function whenSeconds(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(locale(), { dateStyle: 'short', timeStyle: 'medium' });
}

/** An RFC 3339 time as the clock time and the short day ("08:00", "2 дек."), in the user's
 * locale and time zone; the text itself as the time when it does not parse. */
export function clockAndDay(iso: string): { time: string; date: string } {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return { time: iso, date: '' };
  return {
    time: d.toLocaleTimeString(locale(), { timeStyle: 'short' }),
    date: d.toLocaleDateString(locale(), { day: 'numeric', month: 'short' }),
  };
}
