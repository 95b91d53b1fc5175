import { createServer } from 'node:http';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { ServiceRecord } from '../source/transfer.js';
import type { Faults } from './faults.js';
import { HistoryGenerator, statementTruth } from './generator.js';
import { ESTATE_CALENDAR, ESTATE_CALENDAR_NAME, ESTATE_TIMEZONE, Estate, estateFlows, estateTruth, type EstateTruth } from './estate.js';
import { History } from './history.js';
import { getScenario, type ScenarioName } from './scenarios.js';
import { SimulatorService, type SimulatorStats } from './simulator-server.js';
import { SimulatorError } from './simulator-error.js';

export interface SimulatorOptions {
  /** 0 (or omitted) picks a free port; `url` tells which. */
  port?: number;
  host?: string;
  seed?: number;
  scenario?: ScenarioName;
  username?: string;
  password?: string;
  clock?: Clock;
  /** Average generated transfers per minute (default 20). */
  ratePerMinute?: number;
  /** Epoch ms before which nothing is generated (default: 30 days before start-up, at 00:00 UTC). */
  historyStart?: number;
  /** Days of history before the day of start-up (00:00 UTC), when `historyStart` is not given; default 30. */
  historyDays?: number;
  /**
   * Generated minutes kept in memory (default 8). The failures query scans many minutes per page while the
   * successes query reads one minute over many pages; a benchmark reading both at once over a long dense slice
   * sets this to the slice's length, so it measures the client, not the simulator regenerating evicted minutes.
   */
  cachedMinutes?: number;
  logger?: Logger;
  /** Serve the test-only control API under /_sim/ (default false). */
  control?: boolean;
  /** false: no generated history, only injected records (default true). */
  generate?: boolean;
  /** Path prefix the service is served under, e.g. `/api` (default none); `url` includes it. */
  basePath?: string;
  /** Scheduled flows on top of the generated traffic (default 0: none); `truth()` describes them. */
  estate?: number;
  /** Days of the traffic (and its statements and position files) before the day of start-up; default: all of the history. */
  trafficDays?: number;
  /** Days of the partners' daily statements before now, when more than `trafficDays` (the demo's own partners' flows). */
  statementDays?: number;
}

export interface RunningSimulator {
  /** The service's base_url, e.g. http://127.0.0.1:PORT (plus basePath). */
  url: string;
  close(): Promise<void>;
  /** Adds exact records (missing fields get defaults; DATAHORA defaults to the clock's now). Throws SIM_BAD_RECORD. */
  inject(records: Partial<ServiceRecord>[]): void;
  /** Changes faults; see faults.ts. `{ revokeTokens: true }` revokes the tokens issued so far. */
  setFaults(f: Partial<Faults>): void;
  stats(): SimulatorStats;
  /** The scheduled flows of the history (the estate's and the traffic's daily statements), for `--truth`. */
  truth(): SimulatorTruth;
}

export interface SimulatorTruth {
  timezone: string;
  calendars: Record<string, typeof ESTATE_CALENDAR>;
  flows: EstateTruth[];
}

export const DEFAULT_USERNAME = 'demo';
export const DEFAULT_PASSWORD = 'demo';
export const DEFAULT_RATE_PER_MINUTE = 20;
const DAY_MS = 86_400_000;
export const DEFAULT_HISTORY_DAYS = 30;

/** Starts the simulated transfer history service on a real HTTP port. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const clock = options.clock ?? systemClock;
  const seed = options.seed ?? 1;
  const scenario = getScenario(options.scenario ?? 'steady');
  const logger = options.logger ?? silentLogger();
  const historyStart = options.historyStart ?? Math.floor(clock.now() / DAY_MS) * DAY_MS - (options.historyDays ?? DEFAULT_HISTORY_DAYS) * DAY_MS;
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) throw new SimulatorError('SIM_START', `basePath must start with "/": ${basePath}`);
  const estate = (options.estate ?? 0) > 0 ? new Estate(seed, estateFlows(seed, options.estate ?? 0)) : undefined;
  const generator =
    options.generate === false
      ? null
      : new HistoryGenerator({
          seed,
          scenario,
          ratePerMinute: options.ratePerMinute ?? DEFAULT_RATE_PER_MINUTE,
          historyStart,
          ...(options.cachedMinutes !== undefined ? { cachedMinutes: options.cachedMinutes } : {}),
          ...(estate ? { estate } : {}),
          ...(options.trafficDays !== undefined ? { trafficStart: Math.floor(clock.now() / DAY_MS) * DAY_MS - options.trafficDays * DAY_MS } : {}),
          ...(options.statementDays !== undefined ? { statementStart: Math.floor(clock.now() / DAY_MS) * DAY_MS - options.statementDays * DAY_MS } : {}),
        });
  const service = new SimulatorService({
    seed,
    scenario,
    username: options.username ?? DEFAULT_USERNAME,
    password: options.password ?? DEFAULT_PASSWORD,
    clock,
    history: new History(generator),
    historyStart,
    logger,
    control: options.control ?? false,
    basePath,
  });

  const server = createServer((req, res) => service.handle(req, res));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(new SimulatorError('SIM_START', `simulator cannot listen on ${host}:${options.port ?? 0}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new SimulatorError('SIM_START', 'simulator is not listening on a TCP port');
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${urlHost}:${address.port}${basePath}`;
  logger.info({ url, scenario: scenario.name, seed }, 'simulator listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        service.abortPending();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    inject: (records) => {
      service.inject(records);
    },
    setFaults: (f) => {
      service.setFaults(f);
    },
    stats: () => ({ ...service.stats }),
    truth: () => ({
      timezone: ESTATE_TIMEZONE,
      calendars: { [ESTATE_CALENDAR_NAME]: ESTATE_CALENDAR },
      flows: generator ? [...statementTruth(scenario), ...(estate ? estateTruth(estate.flows) : [])] : [],
    }),
  };
}
