import type { Redis } from 'ioredis';
import { transferOf } from '../source/record.js';
import type { ServiceRecord, Transfer } from '../source/transfer.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import type { Fence } from '../cluster/cluster.js';
import { FENCE_CHECK, fencedError } from './fencing.js';
import type { BusEntry, StreamProgress, TransferBus, WindowWriter } from '../cluster/transfer-bus.js';

// KEYS[1] fence key, KEYS[2] stream, KEYS[3] cursors snapshot; ARGV[1] fence value, ARGV[2] cursors JSON,
// ARGV[3] progress JSON, ARGV[4] a batch of transfers (JSON, may be '[]'). Transfers, then the progress marker,
// then the cursor: one script.
const PUBLISH = `
${FENCE_CHECK}
if ARGV[4] ~= '[]' then redis.call('XADD', KEYS[2], '*', 'b', ARGV[4]) end
if ARGV[2] ~= '' then
  redis.call('XADD', KEYS[2], '*', 'p', ARGV[3])
  redis.call('SET', KEYS[3], ARGV[2])
end
return 1`;
/** Transfers per script call: a catch-up window of 600,000 must not stall Redis in one script. */
const CHUNK = 1_000;
const SET_FENCED = `${FENCE_CHECK}
redis.call('SET', KEYS[2], ARGV[2])
return 1`;

/**
 * The transfer stream between the replicas that poll and the one that evaluates rules (a Redis stream).
 * A poller commits a window in one script, fenced by its source lease: the window's new transfers, a progress
 * marker (how far each stream is now read), and its cursor. The leader reads the stream in order, so when it
 * reaches a marker it has every transfer that came before it: data completeness (a missing file's deadline) is
 * only ever judged on transfers the rules have seen. Entries the leader consumed are trimmed.
 */
export class RedisTransferBus implements TransferBus {
  private readonly streamKey: string;
  private readonly consumedKey: string;

  constructor(
    private readonly redis: Redis,
    /** A connection of its own for the blocking read: on the shared one it would hold every lease renewal up. */
    private readonly reader: Redis,
    private readonly prefix: string,
  ) {
    this.streamKey = `${prefix}bus:transfers`;
    this.consumedKey = `${prefix}bus:consumed`;
  }

  /** Transfers wait for their window's commit: until then another replica may take the source over. */
  writer(): WindowWriter {
    let pending: Transfer[] = [];
    return {
      add: (t) => {
        pending.push(t);
      },
      commit: async (fence, cursorsKey, cursors, progress) => {
        const batch = pending;
        pending = [];
        try {
          await this.commit(fence, cursorsKey, cursors, progress, batch);
        } catch (err) {
          pending = [...batch, ...pending];
          throw err;
        }
      },
    };
  }

  /** Commit one window of a source's poller; throws `ha_fenced` when the source lease is no longer ours. */
  async commit(fence: Fence | undefined, cursorsKey: string, cursors: unknown, progress: StreamProgress[], transfers: readonly Transfer[]): Promise<void> {
    if (!fence) throw new TransferWatchError('ha_fenced', 'poll window not committed (fenced): this replica no longer holds the source lease');
    try {
      // Chunks before the last carry transfers only; a crash between chunks leaves the cursor where it was, so
      // the window is read again and its transfers come twice, which the rule engine's id memory absorbs.
      for (let start = 0; start === 0 || start < transfers.length; start += CHUNK) {
        const last = start + CHUNK >= transfers.length;
        await this.redis.eval(
          PUBLISH,
          3,
          fence.key,
          this.streamKey,
          `${this.prefix}state:${cursorsKey}`,
          fence.value,
          last ? JSON.stringify(cursors) : '',
          JSON.stringify(progress),
          encodeBatch(transfers.slice(start, start + CHUNK)),
        );
        if (last) break;
      }
    } catch (err) {
      throw fencedError(err, 'poll window') ?? new TransferWatchError('ha_bus', `cannot commit a poll window to Redis: ${errorMessage(err)}`);
    }
  }

  /** Entries after `afterId` ('0' = from the start), waiting up to `blockMs` for new ones. */
  async read(afterId: string, blockMs: number): Promise<BusEntry[]> {
    const count = 50;
    const answer = (await this.reader.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.streamKey, afterId)) as
      | Array<[string, Array<[string, string[]]>]>
      | null;
    const out: BusEntry[] = [];
    for (const [, entries] of answer ?? []) {
      for (const [id, fields] of entries) {
        const [kind, json] = fields;
        if (json === undefined) continue;
        try {
          if (kind === 'b') out.push({ id, transfers: decodeBatch(json) });
          else if (kind === 'p') out.push({ id, progress: JSON.parse(json) as StreamProgress[] });
        } catch {
          /* a damaged entry is skipped: the transfer is read again from history at the next leader change */
        }
      }
    }
    return out;
  }

  /** Where the current leader stopped reading; '0' when nobody read yet. */
  async consumed(): Promise<string> {
    return (await this.redis.get(this.consumedKey)) ?? '0';
  }

  /** Record (fenced by the leader lease) how far the leader has read and applied, and drop what is before it. */
  async markConsumed(fence: Fence | undefined, id: string): Promise<void> {
    if (!fence) throw new TransferWatchError('ha_fenced', 'not written (fenced): this replica no longer holds the leader lease');
    try {
      await this.redis.eval(SET_FENCED, 2, fence.key, this.consumedKey, fence.value, id);
    } catch (err) {
      throw fencedError(err, 'how far the transfer stream was read') ?? err;
    }
    await this.redis.xtrim(this.streamKey, 'MINID', '~', id).catch(() => undefined);
  }

  /** Entries waiting for the leader (a metric and the sizing docs). */
  async backlog(afterId: string): Promise<number> {
    const entries = await this.redis.xrange(this.streamKey, `(${afterId === '0' ? '0-0' : afterId}`, '+', 'COUNT', 100_000);
    return entries.length;
  }
}

/**
 * Transfers on the stream, up to a thousand per entry: each as its identity, source and normalised record; every
 * other field is derived from the record on the way out (half the bytes of the whole object, the id not hashed
 * twice, and one stream entry and one JSON.parse per batch instead of per transfer).
 */
function encodeBatch(transfers: readonly Transfer[]): string {
  return JSON.stringify(transfers.map((t) => [t.id, t.source, t.record]));
}

function decodeBatch(json: string): Transfer[] {
  return (JSON.parse(json) as Array<[string, string, ServiceRecord]>).map(([id, source, record]) => transferOf(record, id, source));
}
