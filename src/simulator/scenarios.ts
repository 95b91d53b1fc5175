import type { Faults } from './faults.js';

/**
 * Scenarios shape the generated history and the default faults. They are chosen with `--scenario`; every
 * scenario's history is still a pure function of (seed, scenario, time).
 */
export const SCENARIO_NAMES = ['steady', 'burst', 'late-file', 'faults', 'demo'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface Scenario {
  readonly name: ScenarioName;
  readonly description: string;
  /** Share of random transfers that fail. */
  readonly errorRate: number;
  /** Every BURST_PERIOD_MINUTES, BURST_FAILURES_PER_MINUTE failures for BURST_MINUTES on one partner. */
  readonly bursts: boolean;
  /** Minutes between the starts of two bursts. */
  readonly burstPeriodMinutes: number;
  /** Some CUSTODIA position files and BANK2's daily statement arrive after their deadline. */
  readonly lateFiles: boolean;
  /** With `lateFiles`, the share of CUSTODIA's position files that arrive late. */
  readonly positionLateShare: number;
  /**
   * With `lateFiles`, the local minute (America/Sao_Paulo) from which BANK2's statement arrives, within 30 minutes;
   * the demo makes it 08:00:xx, so its simulated morning shows the missing file and then its late arrival.
   */
  readonly lateStatement: { firstMinute: number; spreadMinutes: number };
  /** Faults in force from the start (setFaults changes them). */
  readonly faults: Partial<Faults>;
}

export const BURST_PERIOD_MINUTES = 15;
export const BURST_MINUTES = 2;
/** The demo shows alerts firing and resolving within minutes of starting, so its bursts come more often. */
export const DEMO_BURST_PERIOD_MINUTES = 5;
export const BURST_FAILURES_PER_MINUTE = 4;

/** CUSTODIA's position file is expected every POSITION_PERIOD_MINUTES, by the start of its slot. */
export const POSITION_PERIOD_MINUTES = 10;
/** In `late-file`, this share of position files is late (3 to 6 minutes after the slot start). */
export const POSITION_LATE_SHARE = 0.3;
/** The demo makes most position files late, so a missing-file alert fires and resolves within minutes of starting. */
export const DEMO_POSITION_LATE_SHARE = 0.7;

const SCENARIOS: Readonly<Record<ScenarioName, Scenario>> = {
  steady: {
    name: 'steady',
    description: 'normal traffic: mostly successes, ~2% scattered failures, daily statements on time',
    errorRate: 0.02,
    bursts: false,
    burstPeriodMinutes: BURST_PERIOD_MINUTES,
    lateFiles: false,
    lateStatement: { firstMinute: 8 * 60 + 35, spreadMinutes: 30 },
    positionLateShare: POSITION_LATE_SHARE,
    faults: {},
  },
  burst: {
    name: 'burst',
    description: `steady traffic plus, every ${BURST_PERIOD_MINUTES} minutes, ${BURST_MINUTES * BURST_FAILURES_PER_MINUTE} failures within ${BURST_MINUTES} minutes for one partner on its instance`,
    errorRate: 0.02,
    bursts: true,
    burstPeriodMinutes: BURST_PERIOD_MINUTES,
    lateFiles: false,
    lateStatement: { firstMinute: 8 * 60 + 35, spreadMinutes: 30 },
    positionLateShare: POSITION_LATE_SHARE,
    faults: {},
  },
  'late-file': {
    name: 'late-file',
    description: `steady traffic; ~${POSITION_LATE_SHARE * 100}% of CUSTODIA's position files (expected every ${POSITION_PERIOD_MINUTES} minutes) arrive late, and BANK2's daily statement arrives after 08:30 America/Sao_Paulo`,
    errorRate: 0.02,
    bursts: false,
    burstPeriodMinutes: BURST_PERIOD_MINUTES,
    lateFiles: true,
    positionLateShare: POSITION_LATE_SHARE,
    lateStatement: { firstMinute: 8 * 60 + 35, spreadMinutes: 30 },
    faults: {},
  },
  faults: {
    name: 'faults',
    description: 'steady traffic served badly: random 500s, slow answers beyond 30 s, token revocation, malformed JSON, next quirks, numeric strings and zone-less timestamps',
    errorRate: 0.02,
    bursts: false,
    burstPeriodMinutes: BURST_PERIOD_MINUTES,
    lateFiles: false,
    lateStatement: { firstMinute: 8 * 60 + 35, spreadMinutes: 30 },
    positionLateShare: POSITION_LATE_SHARE,
    faults: {
      status500Rate: 0.05,
      delayMs: 35_000,
      delayRate: 0.02,
      malformedRate: 0.03,
      tokenRevokeEvery: 50,
      nextQuirkRate: 0.5,
      recordQuirkRate: 0.1,
    },
  },
  // What `transfer-watch demo` shows: alerts of both rule types firing and resolving within minutes.
  demo: {
    name: 'demo',
    description: `burst and late-file together, without faults, with a burst every ${DEMO_BURST_PERIOD_MINUTES} minutes and ${DEMO_POSITION_LATE_SHARE * 100}% of position files late (used by \`transfer-watch demo\`)`,
    errorRate: 0.02,
    bursts: true,
    burstPeriodMinutes: DEMO_BURST_PERIOD_MINUTES,
    lateFiles: true,
    positionLateShare: DEMO_POSITION_LATE_SHARE,
    lateStatement: { firstMinute: 8 * 60, spreadMinutes: 1 },
    faults: {},
  },
};

export function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}

export function getScenario(name: ScenarioName): Scenario {
  return SCENARIOS[name];
}
