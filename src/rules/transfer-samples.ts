import type { TransferSample } from '../alerts/alert.js';
import type { Transfer } from '../source/transfer.js';

/** How many transfers an alert shows (notifications list them; the alert API documents "at most 5"). */
export const MAX_SAMPLES = 5;

/**
 * The samples of an alert: of the entries before `end` in a time-sorted list, the latest `MAX_SAMPLES`, newest
 * first (a message shows what happened last).
 */
export function latestSamples(entries: readonly { sample: TransferSample }[], end = entries.length): TransferSample[] {
  return latest(entries, end, (entry) => entry.sample);
}

/** `latestSamples` of a time-sorted list of the samples themselves. */
export function latestOf(samples: readonly TransferSample[], end = samples.length): TransferSample[] {
  return latest(samples, end, (sample) => sample);
}

function latest<T>(entries: readonly T[], end: number, sampleOf: (entry: T) => TransferSample): TransferSample[] {
  const samples: TransferSample[] = [];
  for (let i = Math.min(end, entries.length) - 1; i >= Math.max(0, end - MAX_SAMPLES); i--) {
    const entry = entries[i];
    if (entry !== undefined) samples.push(sampleOf(entry));
  }
  return samples;
}

/** What an alert keeps of a transfer to show it: no ids, nothing a message does not print. */
export function sampleOf(t: Transfer): TransferSample {
  return { time: t.time, file: t.file, code: t.code, message: t.message, user: t.user, instance: t.instance };
}
