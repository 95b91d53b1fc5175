import { createHash } from 'node:crypto';
import type { Transfer } from '../../src/source/transfer.js';
import { eventName } from '../../src/source/transfer.js';

let counter = 0;

/** A transfer with sensible defaults; each call gets a distinct id unless one is given. */
export function transfer(over: Partial<Omit<Transfer, 'record'>> & { time: number }): Transfer {
  const code = over.code ?? 0;
  const eventCode = over.eventCode ?? 7;
  const base = {
    id: over.id ?? createHash('sha256').update(`t${counter++}-${over.time}`).digest('hex').slice(0, 16),
    source: over.source ?? 'prod',
    time: over.time,
    instance: over.instance ?? 'PROD01',
    user: over.user ?? 'BANK1',
    eventCode,
    event: over.event ?? eventName(eventCode),
    file: over.file ?? 'EXTRATO_20261120.RET',
    code,
    result: over.result ?? (code === 0 ? ('success' as const) : ('error' as const)),
    size: over.size ?? 100,
    message: over.message ?? (code === 0 ? 'ok' : 'failed'),
    tags: '',
  };
  return {
    ...base,
    record: {
      DATAHORA: new Date(base.time).toISOString(),
      INSTANCE: base.instance,
      USUARIO: base.user,
      CONEXAO: '',
      DATAARQUIVO: '',
      EVENTO: eventCode,
      HORAARQUIVO: '',
      MAXTAMREG: null,
      NUMREG: null,
      MENSAGEM: base.message,
      NOMEARQUIVO: base.file,
      TAGS: '',
      PROCID: null,
      REDE: '',
      RESULTADO: code,
      TAMARQUIVO: base.size,
      THREADID: null,
      TIPOREC: '',
      DIAS: null,
    },
  };
}

export const MIN = 60_000;
export const HOUR = 3_600_000;

/** Data complete everywhere up to `until` (default: the evaluation time is passed explicitly). */
export function completeUntil(until: number | undefined, from?: number) {
  return { completeUntil: () => until, ...(from !== undefined ? { completeFrom: () => from } : {}) };
}
