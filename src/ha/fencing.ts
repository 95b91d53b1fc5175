import { TransferWatchError, errorMessage } from '../util/errors.js';

/**
 * The check every fenced script starts with (KEYS[1] the lease key, or '' for an unfenced write; ARGV[1] the
 * value this replica holds it with). The refusal names who holds the lease now, or that nobody does, so the
 * log can tell a lease taken over from a lease lost with Redis's data.
 */
export const FENCE_CHECK = `
if KEYS[1] ~= '' then
  local holder = redis.call('GET', KEYS[1])
  if holder ~= ARGV[1] then return redis.error_reply('FENCED ' .. (holder or '')) end
end`;

/** `ha_fenced` naming why, when `err` is a fenced script's refusal; undefined otherwise. */
export function fencedError(err: unknown, lease: string, what: string): TransferWatchError | undefined {
  const match = /FENCED ?([^#\s]*)/.exec(errorMessage(err));
  if (!match) return undefined;
  const holder = match[1];
  const why = holder
    ? `replica ${holder} holds the ${lease} lease now`
    : `the ${lease} lease is not in Redis any more (it expired, or Redis restarted empty); no replica holds it`;
  return new TransferWatchError('ha_fenced', `${what} not written (fenced): ${why}`);
}

/** The lease a fence key names (`<prefix>lease:source:prod` → `source:prod`). */
export function leaseOfFenceKey(key: string): string {
  const at = key.lastIndexOf('lease:');
  return at < 0 ? key : key.slice(at + 'lease:'.length);
}
