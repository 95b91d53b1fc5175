import fc from 'fast-check';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ExpositionRenderer } from '../../src/metrics/exposition-renderer.js';

/**
 * Random registries, random label values, help texts and values: the renderer's text must equal
 * `registry.metrics()` after every round of changes, so cached label blocks are checked against fresh ones.
 */

const LABEL_NAMES = ['a', 'b', 'le_x', 'code'] as const;
type LabelName = (typeof LABEL_NAMES)[number];

/** Characters that need escaping or tend to break formatters, mixed with any unicode (lone surrogates too). */
const tricky = fc.constantFrom('\\', '\n', '"', '\r', '\t', '{', '}', ',', '=', ' ', 'é', '日', '🚀', '\u2028', '\u0000', 'n', '0');
const text = fc.oneof(
  fc.string({ unit: tricky, maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', 'NaN', '+Inf', '-0', '1e21'),
);
/** fc.double() yields NaN, ±Infinity and -0 rarely (a few in a thousand), so they are asked for often here. */
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, Number.MIN_VALUE, Number.MAX_VALUE, 1e21, 1e-7, 0.1 + 0.2),
);
/** prom-client also takes numbers as label values. */
const labelValue: fc.Arbitrary<string | number> = fc.oneof({ weight: 3, arbitrary: text }, { weight: 1, arbitrary: number });

type Kind = 'counter' | 'gauge' | 'histogram' | 'summary';

interface FamilySpec {
  kind: Kind;
  help: string;
  labelNames: LabelName[];
  buckets: number[];
}

const family: fc.Arbitrary<FamilySpec> = fc.record({
  kind: fc.constantFrom<Kind>('counter', 'gauge', 'histogram', 'summary'),
  help: fc.string({ unit: fc.oneof(tricky, fc.constantFrom('a', 'b', ' ')), minLength: 1, maxLength: 20 }),
  labelNames: fc.subarray([...LABEL_NAMES]),
  buckets: fc
    .uniqueArray(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e30, max: 1e30 }), { minLength: 1, maxLength: 4 })
    .map((b) => [...b].sort((x, y) => x - y)),
});

interface Op {
  family: number;
  /** A value per label name (the family uses the ones it has; some may be left out). */
  labels: Partial<Record<LabelName, string | number>>;
  value: number;
  /** Reset the family before applying (new label objects for every series afterwards). */
  reset: boolean;
}

const op: fc.Arbitrary<Op> = fc.record({
  family: fc.nat(),
  labels: fc.record({ a: labelValue, b: labelValue, le_x: labelValue, code: labelValue }, { requiredKeys: [] }),
  // NaN, ±Infinity, -0, subnormals and huge values included.
  value: number,
  reset: fc.boolean(),
});

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string> | Summary<string>;

function build(registry: Registry, specs: FamilySpec[]): AnyMetric[] {
  return specs.map((spec, i) => {
    const config = { name: `m${i}_${spec.kind}`, help: spec.help, labelNames: spec.labelNames, registers: [registry] };
    switch (spec.kind) {
      case 'counter':
        return new Counter(config);
      case 'gauge':
        return new Gauge(config);
      case 'histogram':
        return new Histogram({ ...config, buckets: spec.buckets });
      case 'summary':
        return new Summary({ ...config, percentiles: [0.5, 0.9] });
    }
  });
}

function apply(metrics: AnyMetric[], specs: FamilySpec[], o: Op): void {
  const i = o.family % metrics.length;
  const metric = metrics[i];
  const spec = specs[i];
  if (!metric || !spec) return;
  if (o.reset) metric.reset();
  const labels: Record<string, string | number> = {};
  for (const name of spec.labelNames) {
    const v = o.labels[name];
    if (v !== undefined) labels[name] = v;
  }
  const finite = Number.isFinite(o.value) ? o.value : 0;
  if (metric instanceof Counter) metric.inc(labels, Math.abs(finite));
  else if (metric instanceof Gauge) metric.set(labels, o.value);
  else metric.observe(labels, finite);
}

describe('ExpositionRenderer property', () => {
  it('renders random registries byte for byte as registry.metrics(), round after round', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(family, { minLength: 1, maxLength: 5 }),
        fc.array(fc.array(op, { maxLength: 15 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.record({ region: labelValue, a: labelValue }, { requiredKeys: [] }), { nil: undefined }),
        async (specs, rounds, defaultLabels) => {
          const registry = new Registry();
          const metrics = build(registry, specs);
          const renderer = new ExpositionRenderer(registry);
          for (const [r, round] of rounds.entries()) {
            for (const o of round) apply(metrics, specs, o);
            // Default labels from the second round on, so the cached and the merging paths both meet them.
            if (r === 1 && defaultLabels) registry.setDefaultLabels(defaultLabels);
            const ours = await renderer.render();
            expect(ours).toBe(await registry.metrics());
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
