/** The two query streams per source: failures (`results=-1`) and successes (`results=0`). */
export type StreamKind = 'failures' | 'successes';

export const RESULTS_OF: Readonly<Record<StreamKind, 0 | -1>> = { failures: -1, successes: 0 };

/** The streams polled per source: successes only when `poll.success_interval` is set. */
export function streamKinds(poll: { success_interval: number }): StreamKind[] {
  return poll.success_interval > 0 ? ['failures', 'successes'] : ['failures'];
}

/** A poll stream's id, as cursors, logs and progress markers name it: `prod/failures`, `prod/successes/PROD1`. */
export function streamId(source: string, kind: StreamKind, instance: string | undefined): string {
  return instance === undefined ? `${source}/${kind}` : `${source}/${kind}/${instance}`;
}

/** Which result kind a stream carries, in the rules' vocabulary. */
export const RESULT_OF: Readonly<Record<StreamKind, 'error' | 'success'>> = { failures: 'error', successes: 'success' };
