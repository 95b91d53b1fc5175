import { Counter, Gauge, Registry, type RegistryContentType } from 'prom-client';

/**
 * What the renderer reads of a metric family: prom-client's `get()` result (and `getForPromString()`, which
 * histograms have and the registry prefers). Everything is `unknown` because prom-client hands back whatever
 * it was given; the renderer must print it exactly as prom-client would.
 */
interface Family {
  name: unknown;
  help: unknown;
  type: unknown;
  values?: unknown;
  /** A counter's or gauge's series as prom-client holds them (read in place: see `collect`). */
  hashMap?: Record<string, Sample>;
}

interface Collectable {
  get(): Promise<Family>;
  getForPromString?: () => Promise<Family>;
}

interface Sample {
  value?: unknown;
  labels?: unknown;
  sharedLabels?: unknown;
  metricName?: unknown;
}

type Labels = Record<string, unknown>;

/**
 * The Prometheus text exposition (0.0.4) of a prom-client registry, byte for byte what `registry.metrics()`
 * returns, but faster.
 *
 * Why not `registry.metrics()`: with 10,000 series a scrape over HTTP misses the p99 <= 50 ms goal with it and
 * meets it with this renderer (docs/benchmarks-rounds.md, "Sixth round"); a CPU profile put most of the process's time
 * in prom-client's formatter and GC. Per series and per scrape it builds label arrays, escapes every label value with three
 * regex replaces, and caches the "shared" labels in a WeakMap keyed by a `{}` it has just created, so that
 * cache never hits and gains an entry per series.
 *
 * What we do instead: prom-client keeps a `labels` object per series in the metric's hash map and hands that
 * same object back on every `get()` (a counter keeps the first object it was given; a gauge keeps the one of
 * its last `set()`), so the series' line (`name{name="value",...} value`) is cached in a WeakMap keyed by that
 * object, with the value it shows. Label escaping then happens once per series (or per `set()`), not once per
 * scrape, and a series whose value has not changed since the last scrape (most of them) costs one array slot;
 * a series that is reset or removed drops its object and the WeakMap lets go of the text. Histograms build new `le` label objects on
 * every `get()` (few series); their per-series labels come back as the persistent `sharedLabels` object,
 * which is cached the same way. This took the same scrape to p50 ~12 ms, p99 ~20 ms.
 *
 * The cache assumes a labels object is not changed after prom-client has it: every method of
 * TransferWatchMetrics builds a new object, and prom-client's default metrics reuse theirs unchanged. The tests
 * in test/metrics (a property test among them) compare renderings with `registry.metrics()`.
 *
 * Cases kept exactly by not caching (rare, so not worth a cache): registry default labels (prom-client merges
 * them into a new object per series). An OpenMetrics registry, or a prom-client whose default labels are no
 * longer where we read them, is rendered by prom-client itself.
 */
export class ExpositionRenderer {
  /**
   * The last line rendered for each counter's or gauge's series, per family (a labels object could be handed to
   * two families), with the value it showed. Most series do not change between two scrapes (a partner's error
   * counter moves a few times a day), and their line is reused as it is; a changed value re-renders that line only.
   */
  private readonly lines = new Map<string, WeakMap<object, SeriesLine>>();
  /** `a="x",b="y"` (no braces) per shared-labels object (histogram series). */
  private readonly bodies = new WeakMap<object, string>();
  private readonly parts = new TextParts();

  constructor(private readonly registry: Registry<RegistryContentType>) {}

  async render(): Promise<string> {
    const registry = this.registry;
    if (registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) return registry.metrics();
    const defaults = defaultLabelsOf(registry);
    if (defaults === undefined) return registry.metrics();
    const defaultLabels = Object.keys(defaults).length > 0 ? defaults : undefined;

    // All at once, like prom-client: every collect() callback (default metrics) starts before any is awaited.
    const families = await Promise.all((registry.getMetricsAsArray() as unknown as Collectable[]).map(collect));
    // Pieces joined once at the end: appending to one string made a rope of several small strings per series,
    // 1.5 MB of young garbage per scrape of 10,000 series, flattened again when the answer is encoded. From here
    // to the join nothing awaits, so two renders never fill the kept parts at once.
    const parts = this.parts;
    parts.begin(); // a render that threw half-way left its pieces counted
    for (let i = 0; i < families.length; i++) {
      if (i > 0) parts.push('\n\n');
      this.family(families[i] as Family, defaultLabels, parts);
    }
    parts.push('\n');
    return parts.join();
  }

  private family(metric: Family, defaultLabels: Labels | undefined, parts: TextParts): void {
    const name = escapeText(metric.name as string);
    parts.push(`# HELP ${name} ${escapeText(metric.help as string)}\n# TYPE ${name} ${String(metric.type)}`);
    const lines = defaultLabels === undefined ? this.linesOf(name) : undefined;
    const held = metric.hashMap;
    if (held !== undefined) {
      // A counter's or gauge's series, read from prom-client's map in place (see `collect`).
      for (const key in held) this.sample(held[key] as Sample, name, lines, defaultLabels, parts);
      return;
    }
    for (const sample of (metric.values || []) as Iterable<Sample>) this.sample(sample, name, lines, defaultLabels, parts);
  }

  /** One series' line: from the cache for a counter's or gauge's series (`lines`: no default labels to merge). */
  private sample(sample: Sample, name: string, lines: WeakMap<object, SeriesLine> | undefined, defaultLabels: Labels | undefined, parts: TextParts): void {
    const labels = sample.labels;
    if (lines !== undefined && sample.sharedLabels === undefined && sample.metricName === undefined && typeof labels === 'object' && labels !== null) {
      parts.push(cachedLine(lines, labels as Labels, name, sample.value));
      return;
    }
    const metricName = sample.metricName === undefined ? name : sample.metricName;
    const block =
      defaultLabels === undefined && sample.sharedLabels === undefined
        ? labels === undefined
          ? ''
          : braced(formatLabels(labels as Labels))
        : this.mergedBlock(sample, defaultLabels);
    parts.push(`\n${String(metricName)}${block} ${valueText(sample.value)}`);
  }

  private linesOf(family: string): WeakMap<object, SeriesLine> {
    let lines = this.lines.get(family);
    if (lines === undefined) {
      lines = new WeakMap();
      this.lines.set(family, lines);
    }
    return lines;
  }

  /** The cached `a="x",b="y"` of a histogram series' shared labels. */
  private body(shared: unknown): string {
    if (typeof shared !== 'object' || shared === null) return formatLabels(shared as Labels).join(',');
    let body = this.bodies.get(shared);
    if (body === undefined) {
      body = formatLabels(shared as Labels).join(',');
      this.bodies.set(shared, body);
    }
    return body;
  }

  /**
   * prom-client's general case: the sample's own labels (minus any also in sharedLabels), with registry
   * default labels merged in, then the shared labels.
   */
  private mergedBlock(sample: Sample, defaultLabels: Labels | undefined): string {
    let labels = (sample.labels === undefined ? {} : sample.labels) as Labels;
    if (defaultLabels !== undefined) labels = { ...labels, ...defaultLabels, ...labels };
    if (sample.sharedLabels === undefined) return braced(formatLabels(labels));
    const parts = formatLabels(labels, sample.sharedLabels as Labels);
    const sharedBody = this.body(sample.sharedLabels);
    if (sharedBody !== '') parts.push(sharedBody);
    return braced(parts);
  }
}

/**
 * The pieces of one rendering, in an array kept from scrape to scrape: built anew, its storage was grown by copying
 * a dozen times a scrape (0.2 MB of garbage at 10,000 series).
 */
class TextParts {
  private readonly items: string[] = [];
  private count = 0;

  begin(): void {
    this.count = 0;
  }

  push(text: string): void {
    this.items[this.count++] = text;
  }

  /** The pieces pushed since `begin`, joined; the array keeps its storage for the next rendering. */
  join(): string {
    const items = this.items;
    if (items.length > this.count) items.length = this.count;
    return items.join('');
  }
}

/** A series' rendered line: `\nname{labels} ` once per labels object, and the line for the value it last had. */
interface SeriesLine {
  prefix: string;
  value: unknown;
  line: string;
}

/**
 * `text` as one flat string. A concatenation is a pair of pointers to its parts (a V8 cons string) until something
 * reads its characters; reading one makes V8 copy it flat in place. A cached line is read by every scrape's join,
 * which walked the pair each time: a render took 6.5 ms instead of 5 (the text rendered once per value change).
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

/** The line of a counter's or gauge's series, from the cache when its value has not changed. */
function cachedLine(lines: WeakMap<object, SeriesLine>, labels: Labels, name: string, value: unknown): string {
  let entry = lines.get(labels);
  if (entry === undefined) {
    const prefix = `\n${name}${braced(formatLabels(labels))} `;
    entry = { prefix, value, line: flat(prefix + valueText(value)) };
    lines.set(labels, entry);
  } else if (!Object.is(entry.value, value)) {
    entry.value = value;
    entry.line = flat(entry.prefix + valueText(value));
  }
  return entry.line;
}

/**
 * prom-client keeps default labels in a private field and has no getter. Undefined when the field is not a
 * plain object any more (a prom-client upgrade), so the caller falls back to prom-client's own rendering.
 */
function defaultLabelsOf(registry: Registry<RegistryContentType>): Labels | undefined {
  const value: unknown = (registry as unknown as { _defaultLabels?: unknown })._defaultLabels;
  return typeof value === 'object' && value !== null ? (value as Labels) : undefined;
}

/** What prom-client's Counter and Gauge hold of each series, and do in `get()` before listing them. */
interface HashMapMetric {
  name: unknown;
  help: unknown;
  type: unknown;
  hashMap: Record<string, Sample>;
  collect?: () => unknown;
}

/**
 * A metric's family for rendering. prom-client's `get()` of a counter or gauge lists its series with
 * `Object.values(hashMap)`: 72 bytes of young garbage a series, 0.7 MB a scrape of 10,000 series, which during a
 * backfill on the daemon's small young generation meant several more scavenges inside one render. A counter or
 * gauge whose `get` is prom-client's own is read in place instead, after its `collect()` as `get()` runs it; any
 * other metric (histograms, summaries, a subclass, a prom-client whose map is no longer there) through `get()`.
 */
async function collect(metric: Collectable): Promise<Family> {
  if (typeof metric.getForPromString === 'function') return metric.getForPromString();
  const plain =
    (metric instanceof Counter && metric.get === Counter.prototype.get) || (metric instanceof Gauge && metric.get === Gauge.prototype.get);
  const held = metric as unknown as Partial<HashMapMetric>;
  if (!plain || typeof held.hashMap !== 'object' || held.hashMap === null) return metric.get();
  if (typeof held.collect === 'function') {
    const pending = held.collect();
    if (pending instanceof Promise) await pending;
  }
  return { name: held.name, help: held.help, type: held.type, hashMap: held.hashMap };
}

function braced(parts: string[]): string {
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

/** `name="value"` for each own enumerable label, skipping those `exclude` has (prom-client's formatLabels). */
function formatLabels(labels: Labels, exclude?: Labels): string[] {
  const formatted: string[] = [];
  for (const [name, value] of Object.entries(labels)) {
    if (exclude === undefined || !Object.prototype.hasOwnProperty.call(exclude, name)) {
      formatted.push(`${name}="${String(escapeLabelValue(value))}"`);
    }
  }
  return formatted;
}

const NEEDS_TEXT_ESCAPE = /[\\\n]/;
const NEEDS_LABEL_ESCAPE = /[\\\n"]/;

/** Help text and metric names: backslash and newline escaped (prom-client's escapeString). */
function escapeText(text: string): string {
  return NEEDS_TEXT_ESCAPE.test(text) ? text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') : text;
}

/** Label values: also double quotes; a value that is not a string is printed as it is (as prom-client does). */
function escapeLabelValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return NEEDS_LABEL_ESCAPE.test(value) ? escapeText(value).replace(/"/g, '\\"') : value;
}

/** prom-client's getValueAsString, spelling included (`Nan`, `+Inf`, `-Inf`). */
function valueText(value: unknown): string {
  if (typeof value === 'number' && value - value === 0) return `${value}`;
  if (Number.isNaN(value)) return 'Nan';
  // Number.isFinite does not convert: anything but a finite number lands here, as in prom-client.
  return (value as number) < 0 ? '-Inf' : '+Inf';
}
