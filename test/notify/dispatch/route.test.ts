import { describe, expect, it } from 'vitest';
import { buildRoute, RouteError } from '../../../src/notify/dispatch/route.js';
import { routeSchema } from '../../../src/notify/dispatch/route-schema.js';
import { hasCode } from '../../../src/util/errors.js';

const receivers = ['default', 'mail', 'slack', 'bank'];

function tree() {
  return buildRoute(
    routeSchema.parse({
      receiver: 'default',
      group_by: ['alertname', 'source'],
      group_wait: '10s',
      routes: [
        { matchers: ['severity="critical"'], receiver: 'mail', continue: true, group_interval: '1m' },
        {
          matchers: ['mft_instance=~"PROD.*"'],
          receiver: 'slack',
          repeat_interval: '1h',
          routes: [{ matchers: ['user="BANK1"'], receiver: 'bank', group_by: ['...'] }],
        },
        { matchers: ['team="treasury"'], receiver: 'mail' },
      ],
    }),
    receivers,
  );
}

describe('routing tree', () => {
  it('falls back to the root when no child matches', () => {
    const r = tree().match({ alertname: 'X', severity: 'warning', mft_instance: 'DEV' });
    expect(r.map((x) => x.options.receiver)).toEqual(['default']);
  });

  it('continues after a matching route with continue: true and stops at the first other match', () => {
    const r = tree().match({ alertname: 'X', severity: 'critical', mft_instance: 'PROD2', team: 'treasury' });
    expect(r.map((x) => x.options.receiver)).toEqual(['mail', 'slack']);
  });

  it('goes to the deepest matching route', () => {
    const r = tree().match({ alertname: 'X', mft_instance: 'PROD1', user: 'BANK1' });
    expect(r.map((x) => x.options.receiver)).toEqual(['bank']);
  });

  it('inherits group_by and intervals, with Alertmanager defaults at the root', () => {
    const root = tree();
    expect(root.options).toMatchObject({ groupWaitMs: 10_000, groupIntervalMs: 300_000, repeatIntervalMs: 14_400_000 });
    const [critical, prod, treasury] = root.routes;
    expect(critical?.options).toMatchObject({ groupBy: ['alertname', 'source'], groupWaitMs: 10_000, groupIntervalMs: 60_000, repeatIntervalMs: 14_400_000 });
    expect(prod?.options).toMatchObject({ receiver: 'slack', repeatIntervalMs: 3_600_000 });
    expect(prod?.routes[0]?.options).toMatchObject({ receiver: 'bank', groupByAll: true, repeatIntervalMs: 3_600_000, groupWaitMs: 10_000 });
    expect(treasury?.options.groupIntervalMs).toBe(300_000);
  });

  it('builds group labels and keys; `...` groups by every label', () => {
    const root = tree();
    const labels = { alertname: 'X', source: 'prod', mft_instance: 'PROD1', user: 'BANK1' };
    const rootKey = root.groupKey(root.groupLabels(labels));
    expect(root.groupLabels(labels)).toEqual({ alertname: 'X', source: 'prod' });
    expect(rootKey).toBe('{}:{alertname="X", source="prod"}');
    const bank = root.match(labels)[0];
    expect(bank?.groupLabels(labels)).toEqual(labels);
    expect(bank?.groupKey(labels)).not.toBe(rootKey);
    expect(bank?.id).toContain('user="BANK1"');
  });

  it('rejects unknown receivers, bad matchers and a root without receiver', () => {
    const bad = [
      { receiver: 'nobody' },
      { receiver: 'default', routes: [{ matchers: ['severity=="x'] }] },
      { receiver: 'default', routes: [{ receiver: 'ghost' }] },
      { receiver: 'default', mute_time_intervals: ['weekends'] },
    ];
    for (const config of bad) {
      expect(() => buildRoute(routeSchema.parse(config), receivers), JSON.stringify(config)).toThrow(RouteError);
    }
    let caught: unknown;
    try {
      buildRoute(routeSchema.parse({ receiver: 'default', routes: [{}, { matchers: ['a=~"("'] }] }), receivers);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'route_invalid')).toBe(true);
    expect((caught as Error).message).toContain('route.routes[1].matchers');
  });

  it('without a route section sends everything to the first receiver', () => {
    const root = buildRoute(undefined, ['only']);
    expect(root.match({ alertname: 'A' }).map((r) => r.options.receiver)).toEqual(['only']);
  });
});
