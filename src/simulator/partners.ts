/**
 * The simulated MFT estate: instances, partner mailboxes, the file kinds each partner exchanges and the
 * error codes transfers fail with. Shapes follow what MFT operators at Brazilian companies see daily: CNAB
 * remittance/return files with banks, daily bank statements, EDI with trading partners, payroll files.
 */

export const INSTANCES = ['PROD01', 'PROD02', 'HOM01'] as const;
/** Test-environment instance: a small share of every partner's traffic goes through it. */
export const TEST_INSTANCE = 'HOM01';

export const EVENT_TRANSMISSION = 5;
export const EVENT_RECEPTION = 7;

export type FileKindName = 'remittance' | 'return' | 'statement' | 'edi-out' | 'edi-in' | 'payroll' | 'position';

export interface FileKind {
  readonly name: FileKindName;
  readonly event: number;
  /** LRECL; 0 for variable-length records. */
  readonly lrecl: number;
  readonly recfm: 'FB' | 'VB';
  readonly tags: string;
  /** Number of records (lines) a file of this kind usually has. */
  readonly minRecords: number;
  readonly maxRecords: number;
}

export const FILE_KINDS: Readonly<Record<FileKindName, FileKind>> = {
  remittance: { name: 'remittance', event: EVENT_TRANSMISSION, lrecl: 240, recfm: 'FB', tags: 'CNAB240,REMESSA', minRecords: 4, maxRecords: 5000 },
  return: { name: 'return', event: EVENT_RECEPTION, lrecl: 240, recfm: 'FB', tags: 'CNAB240,RETORNO', minRecords: 4, maxRecords: 8000 },
  statement: { name: 'statement', event: EVENT_RECEPTION, lrecl: 240, recfm: 'FB', tags: 'CNAB240,EXTRATO', minRecords: 20, maxRecords: 3000 },
  'edi-out': { name: 'edi-out', event: EVENT_TRANSMISSION, lrecl: 0, recfm: 'VB', tags: 'EDI,ORDERS', minRecords: 10, maxRecords: 2000 },
  'edi-in': { name: 'edi-in', event: EVENT_RECEPTION, lrecl: 0, recfm: 'VB', tags: 'EDI,INVOIC', minRecords: 10, maxRecords: 2000 },
  payroll: { name: 'payroll', event: EVENT_TRANSMISSION, lrecl: 240, recfm: 'FB', tags: 'CNAB240,FOLHA', minRecords: 50, maxRecords: 20000 },
  position: { name: 'position', event: EVENT_RECEPTION, lrecl: 400, recfm: 'FB', tags: 'CNAB400,POSICAO', minRecords: 5, maxRecords: 600 },
};

export interface Partner {
  /** USUARIO: the partner's mailbox. */
  readonly user: string;
  /** Where its traffic normally runs (a small share goes to TEST_INSTANCE). */
  readonly instance: string;
  /** REDE */
  readonly network: string;
  readonly host: string;
  readonly port: number;
  /** Relative share of the random traffic. */
  readonly weight: number;
  readonly kinds: readonly FileKindName[];
  /** Receives one EXTRATO per business day before ~07:30 America/Sao_Paulo. */
  readonly dailyStatement: boolean;
}

export const PARTNERS: readonly Partner[] = [
  { user: 'BANK1', instance: 'PROD01', network: 'SFTP', host: 'sftp.bank1.example', port: 22, weight: 5, kinds: ['remittance', 'return', 'remittance', 'return'], dailyStatement: true },
  { user: 'BANK2', instance: 'PROD02', network: 'CONNECT:DIRECT', host: 'cd.bank2.example', port: 1364, weight: 4, kinds: ['remittance', 'return'], dailyStatement: true },
  { user: 'BANK3', instance: 'PROD01', network: 'FTPS', host: 'ftps.bank3.example', port: 990, weight: 2, kinds: ['remittance', 'return'], dailyStatement: true },
  { user: 'ACME_EDI', instance: 'PROD02', network: 'AS2', host: 'as2.acme.example', port: 4080, weight: 3, kinds: ['edi-out', 'edi-in'], dailyStatement: false },
  { user: 'GLOBEX_EDI', instance: 'PROD02', network: 'SFTP', host: 'sftp.globex.example', port: 22, weight: 2, kinds: ['edi-out', 'edi-in'], dailyStatement: false },
  { user: 'PAYROLL', instance: 'PROD01', network: 'HTTPS', host: 'api.payroll.example', port: 443, weight: 1, kinds: ['payroll'], dailyStatement: false },
  { user: 'CUSTODIA', instance: 'PROD01', network: 'SFTP', host: 'sftp.custodia.example', port: 22, weight: 0, kinds: ['position'], dailyStatement: false },
];

export interface ErrorCode {
  readonly code: number;
  readonly weight: number;
  /** Whether bytes had moved before the failure (sizes of failed transfers are partial, else 0). */
  readonly partial: boolean;
  message(ctx: { user: string; host: string; port: number; path: string }): string;
}

export const ERROR_CODES: readonly ErrorCode[] = [
  { code: 4, weight: 30, partial: false, message: (c) => `Connection refused by ${c.host}:${c.port}` },
  { code: 12, weight: 18, partial: false, message: (c) => `File not found: ${c.path}` },
  { code: 21, weight: 25, partial: true, message: () => 'Timeout waiting for partner response (120 s)' },
  { code: 36, weight: 10, partial: false, message: (c) => `Authentication failed for user ${c.user}` },
  { code: 99, weight: 12, partial: true, message: () => 'Transfer aborted by partner' },
  { code: 28, weight: 5, partial: true, message: () => 'No space left on destination volume' },
];

export function errorCode(code: number): ErrorCode | undefined {
  return ERROR_CODES.find((e) => e.code === code);
}

export const SUCCESS_MESSAGES: Readonly<Record<number, string>> = {
  [EVENT_TRANSMISSION]: 'File transmitted successfully',
  [EVENT_RECEPTION]: 'File received successfully',
};
