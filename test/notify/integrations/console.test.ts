import { describe, expect, it } from 'vitest';
import { createConsoleIntegration } from '../../../src/notify/integrations/console/console-integration.js';
import { configuredIntegrationKinds, createIntegrations } from '../../../src/notify/integrations/registry.js';
import { receiverSchema } from '../../../src/notify/receiver-schema.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

function buffer(): { chunks: string[]; write(chunk: string): boolean } {
  const chunks: string[] = [];
  return { chunks, write: (c: string) => chunks.push(c) > 0 };
}

describe('console integration', () => {
  const clock = new ManualClock(T0);

  it('writes one readable line per notification, then the window of the burst with its zone and its failed transfers, indented', async () => {
    const out = buffer();
    const console = createConsoleIntegration({ send_resolved: true }, { logger: silentLogger(), templates: undefined, clock, stdout: out });
    await console.send(notificationOf([burstAlert({ labels: { file: 'A\nB' } })]));
    expect(out.chunks).toHaveLength(1);
    const text = out.chunks[0] ?? '';
    expect(text.endsWith('\n')).toBe(true);
    const [line = '', ...rest] = text.slice(0, -1).split('\n');
    expect(line).toMatch(/^\[FIRING:1\] TransferErrorBurst \{/);
    expect(line).toContain('user=BANK1');
    expect(line).toContain('file=A B');
    expect(line).toContain('7 failed transfers for BANK1 in 10m');
    expect(line).toContain('(since 2026-11-22 13:04:05 UTC)');
    // The count is in the summary already: not said twice.
    expect(line).not.toContain('count=7');
    expect(rest[0]).toBe('  window: 10m, from 2026-11-22 12:54:05 UTC to 2026-11-22 13:04:05 UTC');
    expect(rest.slice(1).every((l) => /^ {2}- 2026-11-22 \d\d:\d\d:\d\d UTC {2}\S/.test(l))).toBe(true);
    expect(rest.length).toBeGreaterThan(1);
  });

  it('says for a missing file how many arrived by the deadline, and when a late one arrived', async () => {
    const out = buffer();
    const console = createConsoleIntegration({ send_resolved: true }, { logger: silentLogger(), templates: undefined, clock, stdout: out });
    const deadline = T0 - 600_000;
    const missing = burstAlert({
      labels: { alertname: 'PositionFileLate', user: 'CUSTODIA' },
      annotations: { summary: 'Position file from CUSTODIA arrived late' },
      state: 'resolved',
      resolvedAt: T0,
      values: { rule_type: 'missing_file', count: 0, min_count: 1, deadline_ms: deadline, arrived_at_ms: T0 - 5_000 },
      samples: [],
    });
    await console.send(notificationOf([missing]));
    const line = out.chunks[0] ?? '';
    expect(line).toMatch(/^\[RESOLVED\] PositionFileLate \{/);
    expect(line).toContain('Position file from CUSTODIA arrived late (deadline 2026-11-22 12:54:05 UTC) (arrived late at 2026-11-22 13:04:00 UTC)');
    // Without a summary the line says how many arrived by the deadline itself.
    const bare = buffer();
    await createConsoleIntegration({ send_resolved: true }, { logger: silentLogger(), templates: undefined, clock, stdout: bare }).send(
      notificationOf([{ ...missing, state: 'firing', resolvedAt: undefined, annotations: {}, values: { ...missing.values, arrived_at_ms: '' } }]),
    );
    expect(bare.chunks[0]).toContain('(arrived 0 of 1 by the deadline 2026-11-22 12:54:05 UTC)');
  });
});

describe('createIntegrations', () => {
  it('builds one integration per configured kind, in a fixed order, with the alertmanager resend interval', () => {
    const receiver = receiverSchema.parse({
      name: 'all',
      console: {},
      webhook: { url: 'http://127.0.0.1:1/hook' },
      alertmanager: { url: 'http://127.0.0.1:1', resend_interval: '2m', send_resolved: false },
      slack: { webhook_url: 'http://127.0.0.1:1/services/x' },
      email: { smtp: { host: '127.0.0.1' }, from: 'a@b.c', to: ['d@e.f'] },
    });
    const integrations = createIntegrations(receiver, { logger: silentLogger(), templates: undefined, clock: new ManualClock(0) });
    expect(integrations.map((i) => i.kind)).toEqual(['slack', 'email', 'alertmanager', 'webhook', 'console']);
    expect(configuredIntegrationKinds(receiver)).toEqual(integrations.map((i) => i.kind));
    expect(configuredIntegrationKinds(receiverSchema.parse({ name: 'one', webhook: { url: 'http://127.0.0.1:1/h' } }))).toEqual(['webhook']);
    const am = integrations[2];
    expect(am?.resendInterval).toBe(120_000);
    expect(am?.sendResolved).toBe(false);
    expect(integrations[0]?.resendInterval).toBeUndefined();
  });

  it('fails at creation on a broken inline template', () => {
    const receiver = receiverSchema.parse({ name: 'x', slack: { webhook_url: 'http://127.0.0.1:1/s', template: '{{#each}}' } });
    expect(() => createIntegrations(receiver, { logger: silentLogger(), templates: undefined, clock: new ManualClock(0) })).toThrow(
      /inline template/,
    );
  });
});
