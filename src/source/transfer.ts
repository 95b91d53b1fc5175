/**
 * The typed, normalised transfer record that flows through the pipeline (source → poller → rules/metrics).
 * Produced by `record.ts` from one element of the service's `data` array.
 */

/** Event names for the service's EVENTO codes; any other code is kept as its decimal string. */
export const EVENT_NAMES: Readonly<Record<number, string>> = { 5: 'transmission', 7: 'reception' };

export function eventName(code: number): string {
  return EVENT_NAMES[code] ?? String(code);
}

/** The service's record with its own field names, values normalised (integers as numbers, DATAHORA ISO UTC). */
export interface ServiceRecord {
  DATAHORA: string;
  INSTANCE: string;
  USUARIO: string;
  CONEXAO: string;
  DATAARQUIVO: string;
  EVENTO: number;
  HORAARQUIVO: string;
  MAXTAMREG: number | null;
  NUMREG: number | null;
  MENSAGEM: string;
  NOMEARQUIVO: string;
  TAGS: string;
  PROCID: number | null;
  REDE: string;
  RESULTADO: number;
  TAMARQUIVO: number;
  THREADID: number | null;
  TIPOREC: string;
  DIAS: number | null;
}

export interface Transfer {
  /**
   * Identity: a hash of every field except DIAS, computed on the normalised values (when first read, for a
   * transfer read from a page: see `transferOf`).
   */
  readonly id: string;
  /** Name of the configured source it came from (label `source`). */
  readonly source: string;
  /** Occurrence time (DATAHORA), epoch ms UTC. */
  readonly time: number;
  readonly instance: string;
  readonly user: string;
  readonly eventCode: number;
  /** `transmission` (5), `reception` (7), or the code as a string. */
  readonly event: string;
  readonly file: string;
  /** RESULTADO: 0 = success, anything else is the error code. */
  readonly code: number;
  readonly result: 'success' | 'error';
  /** TAMARQUIVO, bytes. */
  readonly size: number;
  readonly message: string;
  readonly tags: string;
  /** The normalised record with the service's field names (for `query` output and notifications). */
  readonly record: ServiceRecord;
}

/** The label vocabulary shared by `match`, `group_by`, alert labels and metric labels. */
export const LABEL_NAMES = ['source', 'mft_instance', 'user', 'event', 'file', 'code'] as const;
export type LabelName = (typeof LABEL_NAMES)[number];

export function transferLabel(t: Transfer, name: LabelName): string {
  switch (name) {
    case 'source':
      return t.source;
    case 'mft_instance':
      return t.instance;
    case 'user':
      return t.user;
    case 'event':
      return t.event;
    case 'file':
      return t.file;
    case 'code':
      return String(t.code);
  }
}

export function transferLabels(t: Transfer): Record<LabelName, string> {
  return {
    source: t.source,
    mft_instance: t.instance,
    user: t.user,
    event: t.event,
    file: t.file,
    code: String(t.code),
  };
}
