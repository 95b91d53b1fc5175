import type { Transfer } from '../source/transfer.js';
import { flowDayRecord, type FlowDayRecord } from './flow-day-record.js';
import { FlowSummaries, flowKey, utcDay, type FlowDay, type FlowSummary } from './flow-summary.js';

const DAY_MS = 86_400_000;

/**
 * The live side of the flow summary (contract section 13): the leader tells it every transfer it reads from the
 * bus (and the history it replays at a takeover), and takes the days that changed as records for the history
 * journal. Each record is the whole day as this process saw it, so the journal may replace a waiting one with it
 * and the database's union keeps every arrival once. Memory: the flows of today and yesterday (UTC).
 */
export class FlowRecorder {
  private readonly summaries = new FlowSummaries();
  private readonly changed = new Map<string, { flow: FlowSummary; day: FlowDay }>();

  observe(t: Transfer): void {
    const added = this.summaries.add(t);
    if (added) this.changed.set(`${flowKey(added.flow)}\u0000${added.day.day}`, added);
  }

  /** The days changed since the last call, as records; days before yesterday are forgotten. */
  take(now: number): FlowDayRecord[] {
    const records = [...this.changed.values()].map(({ flow, day }) => flowDayRecord(flow, day));
    this.changed.clear();
    this.summaries.forget(utcDay(now - DAY_MS));
    return records;
  }

  get pending(): number {
    return this.changed.size;
  }
}
