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
   * With `lateFiles`: every other slot's position file is late (slots at :00, :20, :40 of the hour) instead of a
   * random share. A late file whose slot follows an on-time one is what the rule can see (a late file arrives in
   * the next slot's window, where it hides the next one's lateness); the demo makes its promise with it.
   */
  readonly positionLateAlternate: boolean;
  /** With `lateFiles`: a late position file arrives this many minutes after its slot starts, plus 0 to `spread - 1`. */
  readonly positionLateDelay: { minutes: number; spread: number };
  /** A burst: this many minutes of this many failures a minute. */
  readonly burstShape: { minutes: number; failuresPerMinute: number };
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
    positionLateAlternate: false,
    positionLateDelay: { minutes: 3, spread: 4 },
    burstShape: { minutes: BURST_MINUTES, failuresPerMinute: BURST_FAILURES_PER_MINUTE },
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
    positionLateAlternate: false,
    positionLateDelay: { minutes: 3, spread: 4 },
    burstShape: { minutes: BURST_MINUTES, failuresPerMinute: BURST_FAILURES_PER_MINUTE },
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
    positionLateAlternate: false,
    positionLateDelay: { minutes: 3, spread: 4 },
    burstShape: { minutes: BURST_MINUTES, failuresPerMinute: BURST_FAILURES_PER_MINUTE },
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
    positionLateAlternate: false,
    positionLateDelay: { minutes: 3, spread: 4 },
    burstShape: { minutes: BURST_MINUTES, failuresPerMinute: BURST_FAILURES_PER_MINUTE },
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
    description: `burst and late-file together, without faults: a burst of 10 failures in one minute every ${DEMO_BURST_PERIOD_MINUTES} minutes, and every other position file (the :00, :20 and :40 slots) a minute late (used by \`transfer-watch demo\`)`,
    errorRate: 0.02,
    bursts: true,
    burstPeriodMinutes: DEMO_BURST_PERIOD_MINUTES,
    lateFiles: true,
    positionLateShare: DEMO_POSITION_LATE_SHARE,
    lateStatement: { firstMinute: 8 * 60, spreadMinutes: 1 },
    // What the banner promises within three minutes of 07:59:15: the 08:00 position file late, arriving at 08:01;
    // a burst of ten failures in one minute (fired by its end, not after two).
    positionLateAlternate: true,
    positionLateDelay: { minutes: 1, spread: 1 },
    burstShape: { minutes: 1, failuresPerMinute: 10 },
    faults: {},
  },
};

export function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}

export function getScenario(name: ScenarioName): Scenario {
  return SCENARIOS[name];
}
