import { TransferWatchError } from '../util/errors.js';

/**
 * Prometheus-style durations: `250ms`, `30s`, `5m`, `1h`, `1d`, `1w`, and compounds such as `1h30m`.
 * A bare `0` means zero. Values are milliseconds.
 */
const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const ORDER = ['w', 'd', 'h', 'm', 's', 'ms'];
const PART = /(\d+)(ms|s|m|h|d|w)/y;

export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  if (s === '') throw new TransferWatchError('invalid_duration', 'empty duration');
  let total = 0;
  let pos = 0;
  let lastUnit = -1;
  while (pos < s.length) {
    PART.lastIndex = pos;
    const m = PART.exec(s);
    if (!m) {
      throw new TransferWatchError('invalid_duration', `invalid duration "${text}" (use e.g. 250ms, 30s, 5m, 1h, 1d)`);
    }
    const unit = m[2] as string;
    const idx = ORDER.indexOf(unit);
    if (idx <= lastUnit) {
      throw new TransferWatchError('invalid_duration', `invalid duration "${text}": units must go from largest to smallest`);
    }
    lastUnit = idx;
    total += Number(m[1]) * (UNITS[unit] as number);
    pos = PART.lastIndex;
  }
  if (!Number.isSafeInteger(total)) throw new TransferWatchError('invalid_duration', `duration "${text}" is too large`);
  return total;
}

/** The shortest compound form: 90000 → `1m30s`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.abs(ms);
  let out = ms < 0 ? '-' : '';
  for (const unit of ORDER) {
    const size = UNITS[unit] as number;
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}
