import { setFlagsFromString } from 'node:v8';

/**
 * After each full garbage collection V8 lets the old space grow to up to 4× what survived before collecting
 * again. transfer-watch keeps little but turns over a lot (a parsed page of 1,000 records is garbage a moment
 * later), so with that allowance its RSS settles far above what it uses; a factor of 1.5 keeps it near what it
 * holds. It still pays: the daemon with the shipped rules peaks at ~199 MB through a 1,000,000-record backfill on
 * Node 20 started bare, 271 MB without it (docs/benchmarks.md, "Sixth round"). More frequent full GCs cost little
 * at this heap size.
 */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets V8's heap growing factor for this process, unless node was started with `--heap-growing-percent`
 * already (the operator's choice wins; `--heap-growing-percent=0` restores V8's own). V8 reads this flag at
 * every heap sizing decision, so setting it after start works, unlike `--max-semi-space-size`, which only the
 * command line can set (the container image does). NODE_OPTIONS cannot carry the flag, so only the command line
 * is looked at. Returns whether it was set.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setFlagsFromString): boolean {
  if (execArgv.some((arg) => FLAG.test(arg))) return false;
  setFlags(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
