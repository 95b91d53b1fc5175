import { z } from 'zod';
import type { StoredRecord } from './generator.js';
import { SimulatorError } from './simulator-error.js';

const int = z.number().int();
const nullableInt = int.nullable();

/** A record to inject: any subset of the service's fields; the rest get plain defaults. DIAS is always computed. */
export const injectedRecordSchema = z
  .object({
    DATAHORA: z.string().refine((s) => !Number.isNaN(Date.parse(zoned(s))), 'DATAHORA must be an ISO 8601 timestamp'),
    INSTANCE: z.string(),
    USUARIO: z.string(),
    CONEXAO: z.string(),
    DATAARQUIVO: z.string(),
    EVENTO: int,
    HORAARQUIVO: z.string(),
    MAXTAMREG: nullableInt,
    NUMREG: nullableInt,
    MENSAGEM: z.string(),
    NOMEARQUIVO: z.string(),
    TAGS: z.string(),
    PROCID: nullableInt,
    REDE: z.string(),
    RESULTADO: int,
    TAMARQUIVO: int,
    THREADID: nullableInt,
    TIPOREC: z.string(),
    DIAS: nullableInt,
  })
  .partial()
  .strict();

export const injectedRecordsSchema = z.array(injectedRecordSchema);

export type InjectedRecord = z.infer<typeof injectedRecordSchema>;

/** A timestamp without a zone is UTC (as the contract reads the service's). */
function zoned(s: string): string {
  return /(Z|[+-]\d{2}:?\d{2})$/i.test(s) || !s.includes('T') ? s : `${s}Z`;
}

function compactUtc(ms: number): { date: string; time: string } {
  const iso = new Date(ms).toISOString();
  return { date: iso.slice(0, 10).replaceAll('-', ''), time: iso.slice(11, 19).replaceAll(':', '') };
}

/** Validates (SIM_BAD_RECORD) and completes an injected record; DATAHORA defaults to `now`. */
export function completeInjectedRecord(input: unknown, now: number): StoredRecord {
  const parsed = injectedRecordSchema.safeParse(input);
  if (!parsed.success) throw new SimulatorError('SIM_BAD_RECORD', `invalid injected record: ${z.prettifyError(parsed.error)}`);
  const r = parsed.data;
  const time = r.DATAHORA === undefined ? now : Date.parse(zoned(r.DATAHORA));
  const stamp = compactUtc(time);
  const result = r.RESULTADO ?? 0;
  const event = r.EVENTO ?? 7;
  return {
    DATAHORA: new Date(time).toISOString(),
    INSTANCE: r.INSTANCE ?? 'PROD01',
    USUARIO: r.USUARIO ?? 'BANK1',
    CONEXAO: r.CONEXAO ?? 'SFTP sftp.bank1.example:22 (injected)',
    DATAARQUIVO: r.DATAARQUIVO ?? stamp.date,
    EVENTO: event,
    HORAARQUIVO: r.HORAARQUIVO ?? stamp.time,
    MAXTAMREG: r.MAXTAMREG === undefined ? 240 : r.MAXTAMREG,
    NUMREG: r.NUMREG === undefined ? 1 : r.NUMREG,
    MENSAGEM: r.MENSAGEM ?? (result === 0 ? 'File received successfully' : `Transfer failed with code ${result}`),
    NOMEARQUIVO: r.NOMEARQUIVO ?? '/in/BANK1/INJECTED.RET',
    TAGS: r.TAGS ?? '',
    PROCID: r.PROCID === undefined ? 1 : r.PROCID,
    REDE: r.REDE ?? 'SFTP',
    RESULTADO: result,
    TAMARQUIVO: r.TAMARQUIVO ?? 0,
    THREADID: r.THREADID === undefined ? 1 : r.THREADID,
    TIPOREC: r.TIPOREC ?? 'FB',
  };
}
