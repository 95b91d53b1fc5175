import type { Transfer } from '../source/transfer.js';

/**
 * What the poller needs of the client: pages of one query. The TransferHistoryClient of src/source/ is one;
 * tests may pass anything of this shape.
 */
export interface PagerQuery {
  start: number;
  end: number;
  results?: 0 | -1;
  instance?: string;
  tags?: string;
  limit: number;
}

export interface PagerPage {
  transfers: Transfer[];
  invalid: number;
  /** An identity per unreadable record (a hash of its raw JSON), so a re-fetched one is counted once. */
  invalidIds?: string[];
}

export interface TransferPager {
  pages(query: PagerQuery, signal?: AbortSignal): AsyncGenerator<PagerPage>;
}
