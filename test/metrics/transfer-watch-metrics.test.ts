import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { parseExposition, samplesOf, valueOf } from './exposition.js';
import { metricsTransfer } from './metrics-transfer.js';
import { requireBinary, runBinary } from './promtool.js';

const transfer = metricsTransfer;

let alertSeq = 0;
function alert(name: string, severity: string, state: Alert['state']): Alert {
  alertSeq += 1;
  return {
    fingerprint: `${name}-${severity}-${state}-${alertSeq}`,
    labels: { alertname: name, severity },
    annotations: {},
    state,
    activeAt: 0,
    values: {},
    samples: [],
  };
}

/** Contract section 4, written out independently of src/metrics so a rename there fails here. */
const CONTRACT: Array<[string, string, string[]]> = [
  ['mft_transfers_total', 'counter', ['source', 'mft_instance', 'event', 'result']],
  ['mft_transfer_bytes_total', 'counter', ['source', 'mft_instance', 'event', 'result']],
  ['mft_transfer_errors_total', 'counter', ['source', 'mft_instance', 'event', 'code']],
  ['mft_last_transfer_timestamp_seconds', 'gauge', ['source', 'mft_instance', 'event', 'result']],
  ['transfer_watch_source_up', 'gauge', ['source']],
  ['transfer_watch_poll_duration_seconds', 'histogram', ['source', 'stream']],
  ['transfer_watch_poll_errors_total', 'counter', ['source', 'stream', 'reason']],
  ['transfer_watch_api_requests_total', 'counter', ['source', 'endpoint', 'status_code']],
  ['transfer_watch_data_lag_seconds', 'gauge', ['source', 'stream']],
  ['transfer_watch_records_total', 'counter', ['source', 'stream']],
  ['transfer_watch_records_invalid_total', 'counter', ['source']],
  ['transfer_watch_alerts', 'gauge', ['alertname', 'severity', 'state']],
  ['transfer_watch_notifications_total', 'counter', ['receiver', 'integration', 'outcome']],
  ['transfer_watch_notification_queue_length', 'gauge', []],
  ['transfer_watch_config_last_reload_successful', 'gauge', []],
];

/** Exercise every method once so every family has at least one series. */
function exercised(opts: { collectDefault?: boolean } = {}): TransferWatchMetrics {
  const m = new TransferWatchMetrics({ maxSeries: 100, version: '1.2.3', collectDefault: opts.collectDefault ?? false });
  m.initSource('prod', ['failures', 'successes']);
  m.observeTransfer(transfer({ id: 'a' }));
  m.observeTransfer(transfer({ id: 'b', code: 53, message: 'refused' }));
  m.observePoll('prod', 'failures', 0.3);
  m.observePoll('prod', 'failures', 1.2, 'timeout');
  m.observeApiRequest('prod', 'transfers', '200');
  m.setDataLag('prod', 'failures', 45);
  m.addRecords('prod', 'failures', 2);
  m.addInvalidRecords('prod', 1);
  m.setSourceUp('prod', true);
  m.setAlerts([alert('TransferErrorBurst', 'critical', 'firing')]);
  m.observeNotification('oncall', 'slack', 'sent');
  m.setNotificationQueueLength(3);
  m.setConfigReload(true, 1_700_000_000_000);
  m.setStateWriteOk(true);
  return m;
}

describe('TransferWatchMetrics exposition', () => {
  it('exposes every contract metric with exactly its type and labels', async () => {
    const expo = parseExposition(await exercised().metrics());
    for (const [name, type, labels] of CONTRACT) {
      expect(expo.types.get(name), name).toBe(type);
      const seriesName = type === 'histogram' ? `${name}_count` : name;
      const found = samplesOf(expo, seriesName);
      expect(found.length, `${name} has samples`).toBeGreaterThan(0);
      for (const s of found) expect(Object.keys(s.labels).sort(), name).toEqual([...labels].sort());
      if (type === 'histogram') {
        for (const s of samplesOf(expo, `${name}_bucket`)) {
          expect(Object.keys(s.labels).sort()).toEqual([...labels, 'le'].sort());
        }
      }
    }
  });

  it('uses its own registry and the Prometheus text content type', async () => {
    const a = exercised();
    const b = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(a.registry).not.toBe(b.registry);
    // A second instance starts empty: nothing leaks through a shared registry.
    expect(samplesOf(parseExposition(await b.metrics()), 'mft_transfers_total')).toEqual([]);
  });

  it('exposes build info and default process metrics', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '9.8.7' });
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'transfer_watch_build_info', { version: '9.8.7', node_version: process.version })).toBe(1);
    expect(expo.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(expo.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
  });
});

describe('observeTransfer', () => {
  it('counts every observation: each transfer is handed over once by the poller, which deduplicates', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    const t = transfer({ id: 'same', size: 250 });
    for (let i = 0; i < 3; i++) m.observeTransfer(t);
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'mft_transfers_total', { source: 'prod', result: 'success' })).toBe(3);
    expect(valueOf(expo, 'mft_transfer_bytes_total', { source: 'prod', result: 'success' })).toBe(750);
  });

  it('does not confuse equal ids from different sources', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    m.observeTransfer(transfer({ id: 'x', source: 'a' }));
    m.observeTransfer(transfer({ id: 'x', source: 'b' }));
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'mft_transfers_total', { source: 'a' })).toBe(1);
    expect(valueOf(expo, 'mft_transfers_total', { source: 'b' })).toBe(1);
  });

  it('counts errors by code only for failed transfers', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    m.observeTransfer(transfer({ id: '1' }));
    m.observeTransfer(transfer({ id: '2', code: 53 }));
    m.observeTransfer(transfer({ id: '3', code: 53 }));
    m.observeTransfer(transfer({ id: '4', code: 12, event: 'transmission', eventCode: 5 }));
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'mft_transfer_errors_total', { code: '53', event: 'reception' })).toBe(2);
    expect(valueOf(expo, 'mft_transfer_errors_total', { code: '12', event: 'transmission' })).toBe(1);
    expect(samplesOf(expo, 'mft_transfer_errors_total', { code: '0' })).toEqual([]);
    expect(valueOf(expo, 'mft_transfers_total', { result: 'error', event: 'reception' })).toBe(2);
    expect(valueOf(expo, 'mft_transfers_total', { result: 'success' })).toBe(1);
  });

  it('keeps the latest occurrence time, not the latest observation', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    const newer = Date.UTC(2025, 0, 2, 12, 0, 0);
    const older = Date.UTC(2025, 0, 2, 11, 0, 0);
    m.observeTransfer(transfer({ id: 'n', time: newer }));
    m.observeTransfer(transfer({ id: 'o', time: older }));
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'mft_last_transfer_timestamp_seconds', { result: 'success' })).toBe(newer / 1000);
  });
});

describe('cardinality guard', () => {
  it('folds error codes past max_series into "other", losing no count, and counts the folds', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 10, version: '1', collectDefault: false });
    for (let code = 1; code <= 50; code++) m.observeTransfer(transfer({ id: `e${code}`, code }));
    const expo = parseExposition(await m.metrics());
    const series = samplesOf(expo, 'mft_transfer_errors_total');
    expect(series.length).toBe(11);
    const other = series.filter((s) => s.labels['code'] === 'other');
    expect(other).toHaveLength(1);
    expect(other[0]?.labels['mft_instance']).toBe('other');
    expect(other[0]?.value).toBe(40);
    expect(series.reduce((sum, s) => sum + s.value, 0)).toBe(50);
    expect(valueOf(expo, 'transfer_watch_series_folded_total', { metric: 'mft_transfer_errors_total' })).toBe(40);
    // The source label is never folded: it comes from the configuration.
    expect(series.every((s) => s.labels['source'] === 'prod')).toBe(true);
  });

  it('bounds a flood of instances in every transfer family', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 10, version: '1', collectDefault: false });
    for (let i = 0; i < 1000; i++) m.observeTransfer(transfer({ id: `t${i}`, instance: `INST${i}` }));
    const expo = parseExposition(await m.metrics());
    for (const name of ['mft_transfers_total', 'mft_transfer_bytes_total', 'mft_last_transfer_timestamp_seconds']) {
      expect(samplesOf(expo, name).length, name).toBeLessThanOrEqual(11);
    }
    expect(valueOf(expo, 'mft_transfers_total', { mft_instance: 'other' })).toBe(990);
  });

  it('keeps counting every instance right when the same series come back, before and past the limit', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 8, version: '1', collectDefault: false });
    // Two configured instances fill the transfer families (2 events × 2 results each): any other instance folds
    // there, but not in mft_last_transfer_timestamp_seconds, which initSource does not create.
    m.initSource('prod', ['failures', 'successes'], ['INST0', 'INST1']);
    const t0 = Date.UTC(2025, 0, 2);
    const instances = ['INST0', 'INST1', 'X', 'Y'];
    for (let round = 0; round < 3; round++) {
      instances.forEach((instance, i) => m.observeTransfer(transfer({ id: `r${round}i${i}`, instance, size: 10 + i, time: t0 + round * 1000 + i })));
    }
    const expo = parseExposition(await m.metrics());
    for (const [i, instance] of ['INST0', 'INST1'].entries()) {
      expect(valueOf(expo, 'mft_transfers_total', { mft_instance: instance, event: 'reception', result: 'success' })).toBe(3);
      expect(valueOf(expo, 'mft_transfer_bytes_total', { mft_instance: instance, event: 'reception', result: 'success' })).toBe(3 * (10 + i));
    }
    expect(valueOf(expo, 'mft_transfers_total', { mft_instance: 'other' })).toBe(6);
    expect(valueOf(expo, 'mft_transfer_bytes_total', { mft_instance: 'other' })).toBe(3 * (12 + 13));
    for (const [i, instance] of instances.entries()) {
      expect(valueOf(expo, 'mft_last_transfer_timestamp_seconds', { mft_instance: instance })).toBe((t0 + 2000 + i) / 1000);
    }
    // Each folded observation is counted, every time it happens.
    expect(valueOf(expo, 'transfer_watch_series_folded_total', { metric: 'mft_transfers_total' })).toBe(6);
    expect(valueOf(expo, 'transfer_watch_series_folded_total', { metric: 'mft_transfer_bytes_total' })).toBe(6);
    expect(valueOf(expo, 'transfer_watch_series_folded_total', { metric: 'mft_last_transfer_timestamp_seconds' })).toBe(0);
  });

  it('folds unbounded poll error reasons and API status codes too', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 10, version: '1', collectDefault: false });
    for (let i = 0; i < 30; i++) {
      m.observePoll('prod', 'failures', 0.1, `reason_${i}`);
      m.observeApiRequest('prod', 'transfers', String(500 + i));
    }
    const expo = parseExposition(await m.metrics());
    expect(samplesOf(expo, 'transfer_watch_poll_errors_total').length).toBe(11);
    expect(valueOf(expo, 'transfer_watch_poll_errors_total', { reason: 'other' })).toBe(20);
    expect(samplesOf(expo, 'transfer_watch_api_requests_total').length).toBe(11);
  });
});

describe('pre-initialised and state series', () => {
  it('creates a source series at 0 before the first event', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    m.initSource('prod', ['failures', 'successes'], ['PROD1']);
    m.initReceiver('oncall', 'slack');
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'transfer_watch_source_up', { source: 'prod' })).toBe(0);
    expect(valueOf(expo, 'transfer_watch_records_total', { stream: 'failures' })).toBe(0);
    expect(valueOf(expo, 'transfer_watch_records_total', { stream: 'successes' })).toBe(0);
    expect(valueOf(expo, 'transfer_watch_poll_duration_seconds_count', { stream: 'successes' })).toBe(0);
    expect(valueOf(expo, 'transfer_watch_records_invalid_total', { source: 'prod' })).toBe(0);
    expect(valueOf(expo, 'mft_transfers_total', { mft_instance: 'PROD1', event: 'reception', result: 'error' })).toBe(0);
    expect(valueOf(expo, 'transfer_watch_notifications_total', { receiver: 'oncall', outcome: 'failed' })).toBe(0);
  });

  it('replaces the alert gauge with the current set, leaving out resolved alerts', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    m.setAlerts([
      alert('Burst', 'critical', 'firing'),
      alert('Burst', 'critical', 'firing'),
      alert('Burst', 'critical', 'pending'),
      alert('Missing', 'warning', 'resolved'),
    ]);
    let expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'transfer_watch_alerts', { alertname: 'Burst', state: 'firing' })).toBe(2);
    expect(valueOf(expo, 'transfer_watch_alerts', { alertname: 'Burst', state: 'pending' })).toBe(1);
    expect(samplesOf(expo, 'transfer_watch_alerts', { alertname: 'Missing' })).toEqual([]);
    m.setAlerts([alert('Missing', 'warning', 'firing')]);
    expo = parseExposition(await m.metrics());
    expect(samplesOf(expo, 'transfer_watch_alerts', { alertname: 'Burst' })).toEqual([]);
    expect(valueOf(expo, 'transfer_watch_alerts', { alertname: 'Missing', severity: 'warning' })).toBe(1);
  });

  it('records reloads, the state directory and the outbox', async () => {
    const m = new TransferWatchMetrics({ maxSeries: 100, version: '1', collectDefault: false });
    m.setConfigReload(true, 1_700_000_000_000);
    m.setConfigReload(false, 1_700_000_100_000);
    m.setStateWriteOk(false);
    m.setNotificationQueueLength(7);
    m.observeNotification('hook', 'webhook', 'failed');
    const expo = parseExposition(await m.metrics());
    expect(valueOf(expo, 'transfer_watch_config_last_reload_successful')).toBe(0);
    // A failed reload keeps the time of the last good one.
    expect(valueOf(expo, 'transfer_watch_config_last_reload_success_timestamp_seconds')).toBe(1_700_000_000);
    expect(valueOf(expo, 'transfer_watch_state_write_ok')).toBe(0);
    expect(valueOf(expo, 'transfer_watch_notification_queue_length')).toBe(7);
    expect(valueOf(expo, 'transfer_watch_notifications_total', { receiver: 'hook', outcome: 'failed' })).toBe(1);
  });
});

describe('promtool check metrics', () => {
  const promtool = requireBinary('promtool');

  it.skipIf(promtool.skipReason !== undefined)('accepts the full exposition, default metrics included', async () => {
    const m = exercised({ collectDefault: true });
    // Label values that need escaping must still produce valid exposition.
    m.observeTransfer(transfer({ id: 'esc', instance: 'we"ird\\inst\nance', code: 7 }));
    const result = await runBinary(promtool.path ?? 'promtool', ['check', 'metrics'], await m.metrics());
    expect(result.stderr + result.stdout).toBe('');
    expect(result.code).toBe(0);
  });
});

describe('TransferWatchMetrics: per-transfer families gathered between reads', () => {
  it('shows every transfer at every read, however the reads and the transfers interleave, folded series included', async () => {
    // Room for two instances' series per family: the third instance's fold into "other" (each of its transfers
    // counted at once, not gathered).
    const m = new TransferWatchMetrics({ maxSeries: 4, version: 'test', collectDefault: false });
    const expected = new Map<string, { n: number; bytes: number; last: number }>();
    const t0 = Date.UTC(2026, 0, 5);
    let seq = 0;
    const observe = (instance: string, result: 'success' | 'error'): void => {
      seq += 1;
      // Times go back and forth: the last-transfer gauge must keep the newest.
      const time = t0 + ((seq * 7919) % 1000) * 1000;
      m.observeTransfer(transfer({ instance, code: result === 'error' ? 21 : 0, size: seq, time }));
      const e = expected.get(`${instance}/${result}`) ?? { n: 0, bytes: 0, last: 0 };
      expected.set(`${instance}/${result}`, { n: e.n + 1, bytes: e.bytes + seq, last: Math.max(e.last, time / 1000) });
    };
    const check = async (): Promise<void> => {
      const expo = parseExposition(await m.metrics());
      for (const [key, e] of expected) {
        const [instance = '', result = ''] = key.split('/');
        if (instance === 'PROD3') continue; // folded into "other": checked below
        const labels = { mft_instance: instance, result };
        expect(valueOf(expo, 'mft_transfers_total', labels)).toBe(e.n);
        expect(valueOf(expo, 'mft_transfer_bytes_total', labels)).toBe(e.bytes);
        expect(valueOf(expo, 'mft_last_transfer_timestamp_seconds', labels)).toBe(e.last);
      }
      const folded = samplesOf(expo, 'mft_transfers_total', { mft_instance: 'other' });
      if (expected.has('PROD3/success')) expect(folded.length).toBeGreaterThan(0);
      const foldedExpected = [...expected].filter(([k]) => k.startsWith('PROD3/')).reduce((sum, [, e]) => sum + e.n, 0);
      expect(folded.reduce((sum, s) => sum + s.value, 0)).toBe(foldedExpected);
    };
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 50; i++) observe(i % 3 === 0 ? 'PROD2' : 'PROD1', i % 4 === 0 ? 'error' : 'success');
      if (round >= 2) for (let i = 0; i < 10; i++) observe('PROD3', 'success');
      await check();
    }
    // Read through prom-client's own registry too: the same numbers.
    expect(await m.registry.metrics()).toBe(await m.metrics());
  });
});
