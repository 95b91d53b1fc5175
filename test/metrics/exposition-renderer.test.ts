import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics, type RegistryContentType } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { ExpositionRenderer } from '../../src/metrics/exposition-renderer.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import type { Transfer } from '../../src/source/transfer.js';
import { parseExposition, valueOf } from './exposition.js';
import { metricsTransfer } from './metrics-transfer.js';

/**
 * The renderer must print exactly what prom-client's `registry.metrics()` prints for the same registry.
 * Each comparison is on the whole text, so a difference in one byte anywhere fails with a diff.
 */

let seq = 0;
/** Each call a new transfer (the metrics count a transfer id once), a second after the previous one. */
function transfer(over: Partial<Transfer> = {}): Transfer {
  seq += 1;
  return metricsTransfer({ id: `id-${seq}`, time: Date.UTC(2025, 0, 2, 3, 4, 5) + seq * 1000, ...over });
}

function alert(name: string, severity: string, state: Alert['state']): Alert {
  seq += 1;
  return { fingerprint: `f${seq}`, labels: { alertname: name, severity }, annotations: {}, state, activeAt: 0, values: {}, samples: [] };
}

/** Label values that need escaping or are otherwise easy to get wrong. */
const NASTY = [
  'back\\slash',
  '\\',
  '\\\\n',
  'new\nline',
  '\n',
  'dou"ble"',
  '"',
  '\\"',
  'all \\ " \n three',
  'ünïcødé — 日本語 🚀',
  '\u0000nul',
  'cr\rtab\t',
  '',
  ' ',
  '{a="b"},c',
  '0',
  '-0',
  'NaN',
  '+Inf',
];

/** Every kind of series the daemon has, through TransferWatchMetrics' own methods. */
function daemonMetrics(maxSeries: number): TransferWatchMetrics {
  const m = new TransferWatchMetrics({ maxSeries, version: '1.2.3-"rc"\\1', collectDefault: false });
  m.initSource('prod', ['failures', 'successes'], ['PROD1', 'PROD2']);
  m.initSource('we"ird\\source\n', ['failures']);
  m.initReceiver('oncall', 'slack');
  m.initReceiver('hook\\"', 'webhook');
  m.observeTransfer(transfer());
  m.observeTransfer(transfer({ code: 53, message: 'refused' }));
  m.observeTransfer(transfer({ event: 'transmission', eventCode: 5, size: 2 ** 53 + 10 }));
  for (const value of NASTY) {
    m.observeTransfer(transfer({ instance: value, code: 21 }));
    m.observeTransfer(transfer({ source: value, event: value, size: 0.1 + 0.2 }));
  }
  m.observePoll('prod', 'failures', 0.3);
  m.observePoll('prod', 'failures', 1.2, 'timeout');
  m.observePoll('prod', 'successes', 1e-9, 'bad "json"\nat line 1');
  m.observePoll('prod', 'successes', 1e6);
  m.observeApiRequest('prod', 'transfers', '200');
  m.observeApiRequest('prod', 'token', 'error');
  m.setDataLag('prod', 'failures', 45.123456789);
  m.setDataLag('prod', 'successes', Number.NaN);
  m.setDataLag('we"ird\\source\n', 'failures', Number.POSITIVE_INFINITY);
  m.addRecords('prod', 'failures', 2);
  m.addRecords('prod', 'successes', 1e21);
  m.addInvalidRecords('prod', 1);
  m.setSourceUp('prod', true);
  m.setAlerts([
    alert('TransferErrorBurst', 'critical', 'firing'),
    alert('TransferErrorBurst', 'critical', 'firing'),
    alert('Late\\"\n', '', 'pending'),
    alert('Gone', 'info', 'resolved'),
  ]);
  m.observeNotification('oncall', 'slack', 'sent');
  m.observeNotification('hook\\"', 'webhook', 'failed');
  m.setNotificationQueueLength(3);
  m.setConfigReload(true, 1_700_000_000_123);
  m.setStateWriteOk(false);
  return m;
}

/** A family on the daemon's registry with help and values the daemon's own methods cannot produce. */
function addAdversarialGauge(registry: Registry): Gauge<string> {
  const gauge = new Gauge({
    name: 'adversarial_values',
    help: 'help with a back\\slash, a new\nline, "quotes", ünïcødé 🚀 and \\n literally',
    labelNames: ['v', 'n'],
    registers: [registry],
  });
  const values = [
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0,
    -1.5,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    1e21,
    1e-7,
    123456789012345680000,
    0.1 + 0.2,
    Number.MAX_SAFE_INTEGER + 2,
  ];
  values.forEach((value, i) => gauge.set({ v: NASTY[i % NASTY.length] ?? '', n: String(i) }, value));
  // prom-client accepts numbers as label values and prints them as JavaScript does.
  gauge.set({ v: -0, n: 1e21 } as unknown as Record<string, string>, 1);
  gauge.set({ v: Number.NaN, n: 0.1 } as unknown as Record<string, string>, 2);
  // A label left out is left out of the line.
  gauge.set({ v: 'only v' }, 3);
  return gauge;
}

async function expectSame(renderer: ExpositionRenderer, registry: Registry<RegistryContentType>): Promise<string> {
  const ours = await renderer.render();
  const theirs = await registry.metrics();
  expect(ours).toBe(theirs);
  return ours;
}

describe('ExpositionRenderer', () => {
  it("prints every kind of the daemon's series byte for byte as prom-client does", async () => {
    const m = daemonMetrics(1_000);
    addAdversarialGauge(m.registry);
    const text = await m.metrics();
    expect(text).toBe(await m.registry.metrics());
    // The comparison covered what it should: escaped labels, histograms, special values.
    expect(text).toContain('mft_transfers_total{source="prod",mft_instance="all \\\\ \\" \\n three",event="reception",result="error"} 1');
    expect(text).toContain('transfer_watch_poll_duration_seconds_bucket{le="+Inf",source="prod",stream="successes"} 2');
    expect(text).toContain('# HELP adversarial_values help with a back\\\\slash, a new\\nline, "quotes", ünïcødé 🚀 and \\\\n literally');
    expect(text).toContain('adversarial_values{v="dou\\"ble\\"",n="5"} -1.5');
    expect(text).toMatch(/ Nan\n/);
    expect(text).toMatch(/ -Inf\n/);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('stays identical scrape after scrape while series change, reset, fold and are removed', async () => {
    const m = daemonMetrics(4);
    const gauge = addAdversarialGauge(m.registry);
    const renderer = new ExpositionRenderer(m.registry);
    await expectSame(renderer, m.registry);
    await expectSame(renderer, m.registry); // every block now comes from the cache

    // Past max_series the unbounded labels fold into `other` and transfer_watch_series_folded_total counts.
    for (let i = 0; i < 10; i++) m.observeTransfer(transfer({ instance: `NEW${i}\\`, code: 100 + i }));
    m.observePoll('prod', 'failures', 2.5, 'timeout');
    m.setAlerts([alert('Other', 'warning', 'firing')]); // resets the family: new label objects
    m.setDataLag('prod', 'failures', 0);
    m.setNotificationQueueLength(0);
    gauge.set({ v: '"', n: '0' }, Number.NEGATIVE_INFINITY);
    gauge.remove({ v: 'dou"ble"', n: '5' });
    const text = await expectSame(renderer, m.registry);
    const expo = parseExposition(text);
    expect(valueOf(expo, 'mft_transfer_errors_total', { mft_instance: 'other', code: 'other' })).toBeGreaterThan(0);
    expect(valueOf(expo, 'transfer_watch_alerts', { alertname: 'Other' })).toBe(1);
    expect(text).not.toContain('TransferErrorBurst');
    expect(text).not.toContain('n="5"');

    gauge.reset();
    m.setAlerts([]);
    await expectSame(renderer, m.registry);
  });

  it('renders the default process metrics as prom-client does (same collected data for both)', async () => {
    const live = new Registry();
    collectDefaultMetrics({ register: live });
    // Default metrics change between two collections, so both formatters read one frozen collection each time.
    const frozen = new Registry();
    const collectable = live.getMetricsAsArray() as unknown as Array<{
      name: string;
      get(): Promise<unknown>;
      getForPromString?: () => Promise<unknown>;
    }>;
    expect(collectable.length).toBeGreaterThan(10);
    const snapshots = await Promise.all(collectable.map((c) => (c.getForPromString ? c.getForPromString() : c.get())));
    collectable.forEach((c, i) => {
      const snapshot = snapshots[i] as { help: string; type: string };
      const stub = { name: c.name, help: snapshot.help, type: snapshot.type, get: () => Promise.resolve(snapshot) };
      frozen.registerMetric(stub as unknown as Counter<string>);
    });
    const text = await expectSame(new ExpositionRenderer(frozen), frozen);
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('nodejs_heap_space_size_total_bytes{space="');
  });

  it('runs collect() callbacks, synchronous and asynchronous, on every render', async () => {
    const registry = new Registry();
    let syncCalls = 0;
    let asyncCalls = 0;
    new Gauge({
      name: 'collected_sync',
      help: 'set in collect()',
      registers: [registry],
      collect() {
        syncCalls += 1;
        this.set(syncCalls);
      },
    });
    new Gauge({
      name: 'collected_async',
      help: 'set in an async collect()',
      labelNames: ['k'],
      registers: [registry],
      async collect() {
        await new Promise((resolve) => setTimeout(resolve, 1));
        asyncCalls += 1;
        this.set({ k: `call ${asyncCalls}` }, asyncCalls);
      },
    });
    const renderer = new ExpositionRenderer(registry);
    const first = await renderer.render();
    expect(first).toContain('collected_sync 1\n');
    expect(first).toContain('collected_async{k="call 1"} 1\n');
    const second = await renderer.render();
    expect(second).toContain('collected_sync 2\n');
    expect(second).toContain('collected_async{k="call 2"} 2\n');
    // prom-client collects again and sees the next values.
    expect(await registry.metrics()).toContain('collected_sync 3\n');
  });

  it('merges registry default labels as prom-client does, and follows a change of them', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'with_defaults_total', help: 'h', labelNames: ['a', 'region'], registers: [registry] });
    const histogram = new Histogram({ name: 'with_defaults_seconds', help: 'h', labelNames: ['a'], buckets: [1], registers: [registry] });
    const plain = new Gauge({ name: 'plain', help: 'h', registers: [registry] });
    counter.inc({ a: 'x"' });
    counter.inc({ a: 'y', region: 'own wins' });
    histogram.observe({ a: 'z\n' }, 0.5);
    plain.set(1);
    const renderer = new ExpositionRenderer(registry);
    await expectSame(renderer, registry); // none yet: cached path
    registry.setDefaultLabels({ region: 'eu\\1', host: 'h"1' });
    const text = await expectSame(renderer, registry);
    expect(text).toContain('with_defaults_total{a="y",region="own wins",host="h\\"1"} 1');
    // prom-client's order for a histogram: le, the default labels, then the series' own labels.
    expect(text).toContain('with_defaults_seconds_bucket{le="1",region="eu\\\\1",host="h\\"1",a="z\\n"} 1');
    registry.setDefaultLabels({});
    await expectSame(renderer, registry);
  });

  it('renders summaries and empty families as prom-client does', async () => {
    const registry = new Registry();
    const summary = new Summary({ name: 'a_summary', help: 'quantiles', labelNames: ['s'], percentiles: [0.01, 0.5, 0.99], registers: [registry] });
    for (let i = 0; i < 100; i++) summary.observe({ s: i % 2 ? 'odd' : 'even"' }, i / 7);
    new Counter({ name: 'never_incremented_total', help: 'no series', labelNames: ['x'], registers: [registry] });
    new Histogram({ name: 'never_observed', help: 'no series', labelNames: ['x'], registers: [registry] });
    await expectSame(new ExpositionRenderer(registry), registry);
  });

  it('reuses an unchanged series\' line and re-renders one whose value moved, per family', async () => {
    const registry = new Registry();
    const transfers = new Counter({ name: 'seen_total', help: 'h', labelNames: ['instance'], registers: [registry] });
    const bytes = new Counter({ name: 'bytes_total', help: 'h', labelNames: ['instance'], registers: [registry] });
    const lag = new Gauge({ name: 'lag_seconds', help: 'h', labelNames: ['instance'], registers: [registry] });
    // One labels object handed to two families: each family's line keeps its own name.
    const labels = { instance: 'MFT1' };
    transfers.inc(labels, 1);
    bytes.inc(labels, 10);
    lag.set({ instance: 'MFT1' }, 0);
    const renderer = new ExpositionRenderer(registry);
    await expectSame(renderer, registry);
    transfers.inc(labels, 1); // the same labels object in prom-client's map, a new value
    lag.set({ instance: 'MFT1' }, -0); // a new labels object, a value equal to the last one but for its sign
    const text = await expectSame(renderer, registry);
    expect(text).toContain('seen_total{instance="MFT1"} 2\n');
    expect(text).toContain('bytes_total{instance="MFT1"} 10\n');
    bytes.inc(labels, 5);
    lag.set({ instance: 'MFT1' }, Number.NaN);
    await expectSame(renderer, registry);
    lag.set({ instance: 'MFT1' }, Number.NaN);
    expect(await expectSame(renderer, registry)).toContain('lag_seconds{instance="MFT1"} Nan\n');
  });

  it('reads a counter or gauge in place only when its get() is prom-client\'s own (a subclass may change the values)', async () => {
    class DoubledGauge extends Gauge {
      override async get() {
        const family = await super.get();
        return { ...family, values: family.values.map((v) => ({ ...v, value: v.value * 2 })) };
      }
    }
    const registry = new Registry();
    const doubled = new DoubledGauge({ name: 'doubled', help: 'h', labelNames: ['k'], registers: [registry] });
    const plain = new Gauge({ name: 'plain', help: 'h', labelNames: ['k'], registers: [registry] });
    doubled.set({ k: 'a' }, 21);
    plain.set({ k: 'a' }, 21);
    const text = await expectSame(new ExpositionRenderer(registry), registry);
    expect(text).toContain('doubled{k="a"} 42\n');
    expect(text).toContain('plain{k="a"} 21\n');
  });

  it('renders an empty registry as prom-client does', async () => {
    const registry = new Registry();
    await expectSame(new ExpositionRenderer(registry), registry);
  });

  it('leaves an OpenMetrics registry to prom-client', async () => {
    const registry = new Registry<RegistryContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    new Counter({ name: 'om_total', help: 'h', registers: [registry] }).inc(2);
    const text = await expectSame(new ExpositionRenderer(registry), registry);
    expect(text.endsWith('# EOF\n')).toBe(true);
  });

  it('serves the renderer from TransferWatchMetrics.metrics()', async () => {
    const m = daemonMetrics(100);
    const render = vi.spyOn(ExpositionRenderer.prototype, 'render');
    const text = await m.metrics();
    expect(render).toHaveBeenCalledTimes(1);
    render.mockRestore();
    expect(text).toBe(await m.registry.metrics());
    expect(parseExposition(text).types.get('transfer_watch_poll_duration_seconds')).toBe('histogram');
  });
});
