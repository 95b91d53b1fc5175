/**
 * For a bench child spawned with a pipe as its stdin: run `stop` and exit when that pipe closes, i.e. when the
 * bench that started it is gone. A bench killed or crashed before its `finally` left its page server (and its
 * simulated services) listening for good on a shared machine; the bench's own SIGTERM stays the usual way out.
 */
export function exitWithParent(stop: () => Promise<unknown>): void {
  process.stdin.on('end', () => void stop().finally(() => process.exit(0)));
  process.stdin.resume();
}
