import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * After each full garbage collection V8 lets the old space grow to up to 4× what survived before collecting
 * again. transfer-watch keeps little but turns over a lot (a parsed page of 1,000 records is garbage a moment
 * later), so with that allowance its RSS settles far above what it uses; a factor of 1.25 keeps it near what it
 * holds, for more frequent full GCs. What it saves and costs is measured by the shipped-rules bench line
 * (docs/benchmarks-rounds.md, "Sixth round").
 */
export const HEAP_GROWING_PERCENT = 25;

/**
 * The flags this process set, by name, last value: V8's flags are the process's, and Node 20 sets them back to the
 * command line's when a worker thread starts (the history store's thread undid every setting here: the new space
 * grew to 32 MB again, 20 MB of the shipped-rules line's peak). `reassertHeapSettings` sets them again.
 */
const applied = new Map<string, string>();

/** setFlagsFromString, remembered for `reassertHeapSettings`. */
function setProcessFlags(flags: string): void {
  setFlagsFromString(flags);
  applied.set(flags.replace(/=.*$/, ''), flags);
}

/**
 * Sets again what this module set, after a worker thread has started (its `online` event: Node resets the flags
 * while the thread starts, so not before). A process that set nothing sets nothing.
 */
export function reassertHeapSettings(setFlags: (flags: string) => void = setFlagsFromString): void {
  for (const flags of applied.values()) setFlags(flags);
}

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets V8's heap growing factor for this process, unless node was started with `--heap-growing-percent`
 * already (the operator's choice wins; `--heap-growing-percent=0` restores V8's own). V8 reads this flag at
 * every heap sizing decision, so setting it after start works, unlike `--max-semi-space-size`, which only the
 * command line can set (the container image does). NODE_OPTIONS cannot carry the flag, so only the command line
 * is looked at. Returns whether it was set.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setProcessFlags): boolean {
  if (execArgv.some((arg) => FLAG.test(arg))) return false;
  setFlags(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}

const PRETENURING_FLAG = /^--(no[-_])?allocation[-_]site[-_]pretenuring(=|$)/;

/**
 * Turns off V8's allocation-site pretenuring for this process, unless node was started with either form of the
 * flag (the operator's choice wins). V8 watches each allocation site, and when most of a site's objects outlive a
 * scavenge it allocates that site's objects straight into the old generation. A backfill's transfers are like
 * that: they live from the poller's turn of the event loop to the leader's and through a rule's window, then die
 * within seconds. Allocated old, they filled the old generation with garbage that only a full collection frees.
 * Over the scrape line's two backfills of ~1,000,000 records each, there were 212–214 full collections with
 * pretenuring and 48–51 without, and the backfill read 156,000–175,000 records/s instead of 125,000–137,000. Node 24's
 * peak RSS with the shipped rules was no higher: 186.1 and 188.5 MB against 190.4 and 188.7 (docs/benchmarks.md,
 * fourteenth round). V8 reads the flag when it decides, so setting it after start works. NODE_OPTIONS cannot
 * carry it, so only the command line is looked at. Returns whether it was set.
 */
export function stopPretenuring(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setProcessFlags): boolean {
  if (execArgv.some((arg) => PRETENURING_FLAG.test(arg))) return false;
  setFlags('--no-allocation-site-pretenuring');
  return true;
}

/**
 * Every setting above, as the CLI applies them before any command allocates; the bench's child processes that
 * start as the daemon does call this too, so that their figures stay the daemon's when a setting is added.
 */
export function applyHeapSettings(): void {
  limitHeapGrowth();
  capYoungGeneration();
  stopPretenuring();
}

/** Two semi-spaces of 4 MB: what `--max-semi-space-size=4` (the image's flag) allows. */
export const YOUNG_GENERATION_CAP_BYTES = 8 * 1024 * 1024;

const SEMI_SPACE_FLAG = /(^|\s)--max[-_]semi[-_]space[-_]size(=|\s|$)/;

/** What `capYoungGeneration` reads and sets of node: the process's own outside tests. */
export interface YoungGenerationControls {
  execArgv: readonly string[];
  nodeOptions: string | undefined;
  setFlags: (flags: string) => void;
  /** Bytes of V8's new space (both semi-spaces) now. */
  newSpaceSize: () => number;
  /** Calls `check` after garbage collections until the returned function is called. */
  afterGc: (check: () => void) => () => void;
}

/**
 * Stops V8's young generation from growing past YOUNG_GENERATION_CAP_BYTES, unless the operator chose a
 * semi-space size (on node's command line or in NODE_OPTIONS). V8 doubles the new space (from 1 MB semi-spaces
 * up to 16 MB on Node 20, 64 MB on Node 24) whenever enough objects survive scavenges, which a backfill's parsed
 * pages always do, and never gives that memory back (docs/benchmarks-rounds.md, "Sixth round"). Only the command line can
 * set the maximum (`--max-semi-space-size`, as the image does), but V8 reads `--semi-space-growth-factor` at each
 * growth. So growth is off (a factor of 1) until the first check after a garbage collection: loading the program's
 * modules is one long stretch without a check, in which Node 24 grew the new space to 32 MB. From then on a check
 * after each collection allows growth (V8's factor of 2) while the new space is below the cap, and stops it for good
 * once it has reached it. Several growths between two checks can still overshoot. Returns whether it watches.
 */
export function capYoungGeneration(controls: YoungGenerationControls = processControls()): boolean {
  if (controls.execArgv.some((arg) => SEMI_SPACE_FLAG.test(arg)) || SEMI_SPACE_FLAG.test(controls.nodeOptions ?? '')) return false;
  let factor = 1;
  controls.setFlags('--semi-space-growth-factor=1');
  const watch: { stop?: () => void } = {};
  const setFactor = (next: number): void => {
    if (next === factor) return;
    factor = next;
    controls.setFlags(`--semi-space-growth-factor=${next}`);
  };
  watch.stop = controls.afterGc(() => {
    if (controls.newSpaceSize() < YOUNG_GENERATION_CAP_BYTES) {
      setFactor(2);
      return;
    }
    setFactor(1);
    watch.stop?.();
  });
  return true;
}

function processControls(): YoungGenerationControls {
  return {
    execArgv: process.execArgv,
    nodeOptions: process.env['NODE_OPTIONS'],
    setFlags: setProcessFlags,
    newSpaceSize: () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
    afterGc: (check) => {
      const observer = new PerformanceObserver(() => check());
      observer.observe({ entryTypes: ['gc'] });
      return () => observer.disconnect();
    },
  };
}
