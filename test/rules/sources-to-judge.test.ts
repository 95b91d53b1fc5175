import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { ManualClock } from '../../src/util/clock.js';
import { createLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

function warningsFor(rulesYaml: string): { rule: string; msg: string }[] {
  const lines: string[] = [];
  const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
  new RuleEngine(rulesFrom(rulesYaml), { clock: new ManualClock(T0), logger, sources: ['prod'] });
  return lines.map((l) => JSON.parse(l) as { rule: string; msg: string }).map(({ rule, msg }) => ({ rule, msg }));
}

describe('rules that judge only data read whole', () => {
  it('warn at load, naming their type, when their match.source accepts no configured source', () => {
    const warnings = warningsFor(`
rules:
  - { name: Ratio, type: failure_ratio, match: { source: [staging] }, threshold: 0.5, window: 10m }
  - { name: Stuck, type: stuck_partner, match: { source: [staging] }, failing_for: 1h }
  - { name: Quiet, type: volume, match: { source: [staging] }, window: 1h, min: 1 }
  - { name: Missing, type: missing_file, match: { source: [staging] }, deadline: '0 8 * * *', window: 1h }
  - { name: Burst, type: error_burst, match: { source: [staging] }, threshold: 3, window: 10m }
`);
    expect(warnings).toEqual([
      { rule: 'Ratio', msg: 'failure_ratio rule matches no configured source; it will never decide' },
      { rule: 'Stuck', msg: 'stuck_partner rule matches no configured source; it will never decide' },
      { rule: 'Quiet', msg: 'volume rule matches no configured source; it will never decide' },
      { rule: 'Missing', msg: 'missing_file rule matches no configured source; it will never decide' },
    ]);
  });

  it('say nothing when a configured source matches (or the rule names none)', () => {
    expect(
      warningsFor(`
rules:
  - { name: Ratio, type: failure_ratio, match: { source: ['pr*'] }, threshold: 0.5, window: 10m }
  - { name: Missing, type: missing_file, deadline: '0 8 * * *', window: 1h }
`),
    ).toEqual([]);
  });
});
