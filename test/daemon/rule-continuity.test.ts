import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Config, SourceConfig } from '../../src/config/schema.js';
import { RuleContinuity } from '../../src/daemon/roles/rule-continuity.js';
import type { Poller } from '../../src/poller/poller.js';
import type { RuleEngine } from '../../src/rules/rule-engine.js';
import type { Transfer } from '../../src/source/transfer.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

/**
 * A source whose history a start could not re-read is read again in the background (issue 50). Only what came before
 * the cursor committed at the start goes to the rules: what came after it, the live rules observed meanwhile, and a
 * second observation would count it twice.
 */

const source = { name: 'prod' } as SourceConfig;

/** A replay poller of `prod` whose committed cursor is `cursor()` and whose history is `history`, failing while `fails()`. */
function poller(cursor: () => number, history: readonly number[], fails: () => boolean): Poller {
  return {
    restore: () => Promise.resolve(true),
    get streams() {
      return [{ id: 'prod/successes', source: 'prod', kind: 'successes', cursor: cursor(), catchingUp: true }];
    },
    replay: (_lookback: number, observe: (t: Transfer) => void) => {
      if (fails()) return Promise.resolve(false);
      for (const time of history) if (time <= cursor()) observe({ id: String(time), time } as Transfer);
      return Promise.resolve(true);
    },
  } as unknown as Poller;
}

describe('RuleContinuity', () => {
  afterEach(() => vi.useRealTimers());

  it('reads a source it could not re-read again later, handing the rules only what came before the cursor of the start', async () => {
    vi.useFakeTimers();
    const clock = new ManualClock(1_000_000);
    let cursor = 900_000;
    let failing = true;
    const history = [800_000, 899_000, 950_000, 990_000];
    const continuity = new RuleContinuity({
      config: () => ({ sources: [source] }) as unknown as Config,
      clock,
      logger: silentLogger(),
      replayPoller: () => poller(() => cursor, history, () => failing),
      history: undefined,
    });
    const observed: number[] = [];
    const engine = { observe: (t: Transfer) => observed.push(t.time) } as unknown as RuleEngine;
    const rebuilt = await continuity.rebuild(engine, 300_000, () => undefined);
    expect(rebuilt.failed).toEqual([{ source, until: 900_000 }]);
    expect(rebuilt.from).toBe(1_000_000);
    expect(observed).toEqual([]);

    // Meanwhile the live poll went on to 995,000; the service answers again.
    cursor = 995_000;
    failing = false;
    const adopted: number[] = [];
    continuity.rereadFailed(rebuilt.failed, 300_000, 1_000_000, () => engine, () => true, (from) => adopted.push(from));
    await vi.advanceTimersByTimeAsync(30_000);
    expect(observed).toEqual([800_000, 899_000]);
    expect(adopted).toEqual([700_000]);
  });
});
