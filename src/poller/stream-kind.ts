/** The two query streams per source: failures (`results=-1`) and successes (`results=0`). */
export type StreamKind = 'failures' | 'successes';

export const RESULTS_OF: Readonly<Record<StreamKind, 0 | -1>> = { failures: -1, successes: 0 };

/** Which result kind a stream carries, in the rules' vocabulary. */
export const RESULT_OF: Readonly<Record<StreamKind, 'error' | 'success'>> = { failures: 'error', successes: 'success' };
