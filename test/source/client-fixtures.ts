import type { SourceConfig } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/util/logger.js';
import type { TransferHistoryClient, TransferPage, TransfersQuery } from '../../src/source/transfer-history-client.js';
import type { Transfer } from '../../src/source/transfer.js';

export const T0 = Date.parse('2024-05-01T00:00:00Z');
export const T1 = Date.parse('2024-05-02T00:00:00Z');

export function sourceConfig(baseUrl: string, overrides: Partial<SourceConfig> = {}): SourceConfig {
  return {
    name: 'prod',
    base_url: baseUrl,
    username: 'operator',
    password: 's3cret-pass',
    instances: [],
    tags: '',
    timeout: 2000,
    retries: 3,
    max_records_per_window: 1_000_000,
    max_response_bytes: 32 * 1024 * 1024,
    tls: { ca_file: '', insecure_skip_verify: false },
    ...overrides,
  };
}

export function query(overrides: Partial<TransfersQuery> = {}): TransfersQuery {
  return { start: T0, end: T1, limit: 1000, ...overrides };
}

/** A logger whose JSON lines tests can read back. */
export function capturingLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>>; text: () => string } {
  const raw: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void raw.push(s) } });
  return {
    logger,
    lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => raw.join(''),
  };
}

export interface Collected {
  pages: TransferPage[];
  transfers: Transfer[];
  invalid: number;
  dropped: number;
}

export async function collect(client: TransferHistoryClient, q: TransfersQuery, signal?: AbortSignal): Promise<Collected> {
  const pages: TransferPage[] = [];
  for await (const page of client.pages(q, signal)) pages.push(page);
  return {
    pages,
    transfers: pages.flatMap((p) => p.transfers),
    invalid: pages.reduce((n, p) => n + p.invalid, 0),
    dropped: pages.reduce((n, p) => n + p.dropped, 0),
  };
}
