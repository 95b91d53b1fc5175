import { parseMatchers } from '../notify/matcher.js';
import { errorMessage } from '../util/errors.js';
import { nearestKey } from '../base/nearest-key.js';
import { formatPath } from '../base/value-path.js';

export interface ReferenceIssue {
  path: PropertyKey[];
  message: string;
}

/** The parts of a config that refer to each other: read leniently, so they are checked even when the schema is not met. */
interface ReferenceView {
  receivers: Array<{ name: string }>;
  mute_time_intervals: Array<{ name: string }>;
  route?: RouteView;
  inhibit_rules: Array<{ source_matchers: string[]; target_matchers: string[] }>;
}

interface RouteView {
  receiver?: string | undefined;
  matchers: string[];
  mute_time_intervals: string[];
  active_time_intervals: string[];
  routes: RouteView[];
}

const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');
const named = (v: unknown): Array<{ name: string }> =>
  list(v)
    .map((x) => record(x)['name'])
    .filter((n): n is string => typeof n === 'string')
    .map((name) => ({ name }));

function routeView(v: unknown): RouteView {
  const r = record(v);
  return {
    ...(typeof r['receiver'] === 'string' ? { receiver: r['receiver'] } : {}),
    matchers: strings(r['matchers']),
    mute_time_intervals: strings(r['mute_time_intervals']),
    active_time_intervals: strings(r['active_time_intervals']),
    routes: list(r['routes']).map(routeView),
  };
}

/**
 * The reference view of a config as parsed from YAML, whether or not it meets the schema: `check` lists an
 * unknown receiver in the same run as a misspelt key, not only after the key is fixed.
 */
export function referenceViewOf(data: unknown): ReferenceView {
  const d = record(data);
  return {
    receivers: named(d['receivers']),
    mute_time_intervals: named(d['mute_time_intervals']),
    ...(d['route'] !== undefined ? { route: routeView(d['route']) } : {}),
    inhibit_rules: list(d['inhibit_rules']).map((x) => ({ source_matchers: strings(record(x)['source_matchers']), target_matchers: strings(record(x)['target_matchers']) })),
  };
}

/**
 * Checks of names that refer to other sections (receivers, time intervals) and of matcher syntax. The notify
 * stage checks these again when it builds the routing tree, but stops at the first; here every one is reported
 * with its position, which is what `check` is for. Takes the validated config or, when the schema is not met,
 * `referenceViewOf` the raw data.
 */
export function checkReferences(config: ReferenceView): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const receivers = config.receivers.map((r) => r.name);
  const intervals = config.mute_time_intervals.map((m) => m.name);
  const add = (path: PropertyKey[], message: string): void => {
    issues.push({ path, message: `${formatPath(path)}: ${message}` });
  };
  const checkMatchers = (path: PropertyKey[], list: readonly string[]): void => {
    list.forEach((text, i) => {
      try {
        parseMatchers(text);
      } catch (err) {
        add([...path, i], `invalid matcher: ${errorMessage(err)}`);
      }
    });
  };

  const seenIntervals = new Set<string>();
  config.mute_time_intervals.forEach((m, i) => {
    if (seenIntervals.has(m.name)) add(['mute_time_intervals', i, 'name'], `duplicate time interval name "${m.name}"`);
    seenIntervals.add(m.name);
  });

  const walk = (route: RouteView, path: PropertyKey[]): void => {
    if (route.receiver !== undefined && !receivers.includes(route.receiver)) {
      const hint = nearestKey(route.receiver, receivers);
      add([...path, 'receiver'], `unknown receiver "${route.receiver}"${hint ? ` (did you mean "${hint}"?)` : ''}`);
    }
    checkMatchers([...path, 'matchers'], route.matchers);
    for (const key of ['mute_time_intervals', 'active_time_intervals'] as const) {
      route[key].forEach((name, i) => {
        if (!intervals.includes(name)) add([...path, key, i], `unknown time interval "${name}" (define it under mute_time_intervals)`);
      });
    }
    route.routes.forEach((child, i) => walk(child, [...path, 'routes', i]));
  };
  if (config.route) {
    if (config.route.receiver === undefined) add(['route'], 'the root route needs a receiver');
    if (config.route.matchers.length > 0) add(['route', 'matchers'], 'the root route must not have matchers (it matches every alert)');
    walk(config.route, ['route']);
  }

  config.inhibit_rules.forEach((rule, i) => {
    checkMatchers(['inhibit_rules', i, 'source_matchers'], rule.source_matchers);
    checkMatchers(['inhibit_rules', i, 'target_matchers'], rule.target_matchers);
  });
  return issues;
}
