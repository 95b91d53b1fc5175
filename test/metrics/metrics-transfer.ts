import type { Transfer } from '../../src/source/transfer.js';

/** A transfer as the metrics read it (no service record): defaults for every field, `over` on top. */
export function metricsTransfer(over: Partial<Transfer> = {}): Transfer {
  const code = over.code ?? 0;
  return {
    id: 'id-1',
    source: 'prod',
    time: Date.UTC(2025, 0, 2, 3, 4, 5),
    instance: 'PROD1',
    user: 'BANK1',
    eventCode: 7,
    event: 'reception',
    file: 'EXTRATO_1.RET',
    code,
    result: code === 0 ? 'success' : 'error',
    size: 1000,
    message: '',
    tags: '',
    record: {} as Transfer['record'], // not read by metrics
    ...over,
  };
}
