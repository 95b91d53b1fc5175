import { success, type Scenario } from './e2e-daemon.js';

const DAY = 86_400_000;

/**
 * A ledger scenario the history tests share: two banks' daily statements, expected at 08:00 UTC over the 8 hours
 * before, over the days from 9 to 2 back (filled by a `sla.backfill` of 12 days at the first start). BANK1 sends none
 * on the days `bank1Skips` names; BANK2 sends every day, day 4's two hours late. `extra` joins the config's
 * top-level sections (`history`, …).
 */
export function writeStatementLedger(s: Scenario, o: { bank1Skips: (back: number) => boolean; extra?: Record<string, unknown> }): { today: number; day: (back: number) => string } {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const day = (back: number): string => new Date(today - back * DAY).toISOString().slice(0, 10);
  const records = [];
  for (let back = 9; back >= 2; back--) {
    const deadline = today - back * DAY + 8 * 3_600_000;
    if (!o.bank1Skips(back)) records.push(success(deadline - 3_600_000, { USUARIO: 'BANK1', NOMEARQUIVO: `EXTRATO_BANK1_${day(back)}.RET`, INSTANCE: 'PROD01' }));
    records.push(success(deadline + (back === 4 ? 2 * 3_600_000 : -3_600_000), { USUARIO: 'BANK2', NOMEARQUIVO: `EXTRATO_BANK2_${day(back)}.RET`, INSTANCE: 'PROD01' }));
  }
  s.inject(records);
  s.write({
    rules: [{ name: 'StatementMissing', type: 'missing_file', match: { file: ['EXTRATO_*'] }, deadline: '0 8 * * *', timezone: 'UTC', window: '8h', for_each: { label: 'user', values: ['BANK1', 'BANK2'] } }],
    receivers: [{ name: 'null', console: {} }],
    route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
    poll: { max_window: '1d' },
    extra: { sla: { backfill: '12d' }, ...o.extra },
  });
  return { today, day };
}
