import { FOLDED_LABEL_VALUE, type MetricDefinition } from './metric-names.js';

export type LabelSet = Record<string, string>;

/**
 * Cardinality guard: remembers the label sets each metric family has exposed and, once a family holds
 * `maxSeries` of them, maps any new label set to one with its unbounded labels set to `other`. A flood of
 * distinct error codes or instance names then costs one series, not one per value, and memory stays bounded.
 * Labels from the configuration or a fixed vocabulary are never folded, so the folded series of a family are
 * bounded by those (a few beyond `maxSeries` at most).
 */
export class SeriesGuard {
  private readonly seen = new Map<string, Set<string>>();

  constructor(
    private readonly maxSeries: number,
    /** Called once per folded observation, with the metric family name. */
    private readonly onFold: (metric: string) => void,
  ) {}

  /** The label set to record for `labels`: itself, or its folded form past the limit. */
  admit(definition: MetricDefinition, labels: LabelSet): LabelSet {
    const keys = this.keysOf(definition.name);
    const key = seriesKey(definition, labels);
    if (keys.has(key)) return labels;
    if (keys.size < this.maxSeries || definition.foldable.length === 0) {
      keys.add(key);
      return labels;
    }
    const folded: LabelSet = { ...labels };
    for (const name of definition.foldable) folded[name] = FOLDED_LABEL_VALUE;
    keys.add(seriesKey(definition, folded));
    this.onFold(definition.name);
    return folded;
  }

  /** Forget every series of a family (after the family was reset). */
  forget(definition: MetricDefinition): void {
    this.seen.delete(definition.name);
  }

  /** How many series of the family are currently tracked. */
  size(definition: MetricDefinition): number {
    return this.seen.get(definition.name)?.size ?? 0;
  }

  private keysOf(name: string): Set<string> {
    let keys = this.seen.get(name);
    if (!keys) {
      keys = new Set();
      this.seen.set(name, keys);
    }
    return keys;
  }
}

/** A key that cannot collide: label values may contain any character, so JSON-encode them in label order. */
export function seriesKey(definition: MetricDefinition, labels: LabelSet): string {
  return JSON.stringify(definition.labels.map((name) => labels[name] ?? ''));
}
