import { TransferWatchError, errorMessage } from '../util/errors.js';

/**
 * The check every fenced script starts with (KEYS[1] the lease key, or '' for an unfenced write; ARGV[1] the
 * value this replica holds it with). The refusal names the lease (the key after its last `lease:`; lease names
 * have no spaces) and who holds it now, or `-` when nobody does, so the log can tell a lease taken over from a
 * lease lost with Redis's data, whichever script refused.
 */
export const FENCE_CHECK = `
if KEYS[1] ~= '' then
  local holder = redis.call('GET', KEYS[1])
  if holder ~= ARGV[1] then
    local lease = string.match(KEYS[1], '^.*lease:(.*)$') or KEYS[1]
    return redis.error_reply('FENCED ' .. lease .. ' ' .. (holder or '-'))
  end
end`;

/** `ha_fenced` naming the lease and why, when `err` is a fenced script's refusal; undefined otherwise. */
export function fencedError(err: unknown, what: string): TransferWatchError | undefined {
  const match = /FENCED (\S+) (\S+)/.exec(errorMessage(err));
  if (!match) return undefined;
  const [, lease = '?', value = '-'] = match;
  const why =
    value === '-'
      ? `the ${lease} lease is not in Redis any more (it expired, or Redis restarted empty); no replica holds it`
      : `replica ${value.split('#')[0] ?? value} holds the ${lease} lease now`;
  return new TransferWatchError('ha_fenced', `${what} not written (fenced): ${why}`);
}
