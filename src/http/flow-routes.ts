import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DiscoverReport } from '../flows/discover-flows.js';
import { flowCsv, proposalYaml } from '../flows/flow-report-format.js';
import type { FlowView } from '../flows/flow-view.js';
import type { Logger } from '../util/logger.js';
import { errorFields } from '../util/errors.js';
import { HttpError } from './http-error.js';
import { renderFlowsPage } from './status-page/render-flows-page.js';

export interface FlowRoutesDeps {
  /** The flow view, or why there is none (history disabled). */
  flows: () => FlowView | string;
  info(): { timezone: string; version: string };
  logger: Logger;
}

export interface FlowReply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

const PROPOSED_BY = 'transfer-watch (GET /api/v1/flows/proposal)';

function bad(message: string): HttpError {
  return new HttpError(400, 'flows_bad_query', message);
}

/** `watched=true|false` and `format=json|csv` (the proposal is YAML only). */
function parse(req: IncomingMessage, formats: readonly string[]): { watched: boolean | undefined; format: string } {
  const p = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const known = ['watched', ...(formats.length > 1 ? ['format'] : [])];
  for (const key of new Set(p.keys())) if (!known.includes(key)) throw bad(`unknown parameter "${key.slice(0, 100)}" (known: ${known.join(', ')})`);
  for (const key of known) if (p.getAll(key).length > 1) throw bad(`${key}: given more than once`);
  const w = p.get('watched');
  if (w !== null && w !== 'true' && w !== 'false') throw bad('watched: must be true or false');
  const format = p.get('format') ?? (formats[0] as string);
  if (!formats.includes(format)) throw bad(`format: must be ${formats.join(' or ')}`);
  return { watched: w === null ? undefined : w === 'true', format };
}

function only(report: DiscoverReport, watched: boolean | undefined): DiscoverReport {
  return watched === undefined ? report : { ...report, flows: report.flows.filter((f) => f.watched_by.length > 0 === watched) };
}

/**
 * `GET /api/v1/flows`, `GET /api/v1/flows/proposal` and the `/flows` page (contract section 13), from the flow
 * summary in the history store: 503 while the history is disabled or its database does not answer.
 */
export function flowHandlers(deps: FlowRoutesDeps) {
  const report = async (req: IncomingMessage): Promise<DiscoverReport> => {
    const view = deps.flows();
    if (typeof view === 'string') throw new HttpError(503, 'history_disabled', `the flow summary lives in the history, which is disabled: ${view}`);
    try {
      return await view.report();
    } catch (err) {
      deps.logger.warn({ err: errorFields(err), path: new URL(req.url ?? '/', 'http://localhost').pathname }, 'flow summary query failed');
      throw new HttpError(503, 'history_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
    }
  };
  return {
    async list(req: IncomingMessage): Promise<FlowReply> {
      const { watched, format } = parse(req, ['json', 'csv']);
      const r = only(await report(req), watched);
      return format === 'csv' ? { status: 200, contentType: 'text/csv; charset=utf-8', body: flowCsv(r) } : { status: 200, contentType: 'application/json', body: JSON.stringify(r) };
    },
    async proposal(req: IncomingMessage): Promise<FlowReply> {
      const { watched } = parse(req, ['yaml']);
      const full = await report(req);
      // By default the flows nobody watches (the watched ones named in the header); `watched=true` the others' rules.
      const body = watched === true ? proposalYaml(only(full, true), { unwatchedOnly: false, by: PROPOSED_BY }) : proposalYaml(full, { unwatchedOnly: true, by: PROPOSED_BY });
      return { status: 200, contentType: 'application/yaml; charset=utf-8', body };
    },
    async page(req: IncomingMessage): Promise<FlowReply> {
      const nonce = randomBytes(16).toString('base64');
      const data: Parameters<typeof renderFlowsPage>[0] = { ...deps.info() };
      let status = 200;
      try {
        data.report = await report(req);
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        data.problem = err.message;
        status = err.status;
      }
      return {
        status,
        contentType: 'text/html; charset=utf-8',
        body: renderFlowsPage(data, nonce),
        headers: {
          'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`,
          'X-Frame-Options': 'DENY',
          'Referrer-Policy': 'same-origin',
        },
      };
    },
  };
}
