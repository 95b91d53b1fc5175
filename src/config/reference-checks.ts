import { parseMatchers } from '../notify/matcher.js';
import type { RouteConfig } from '../notify/dispatch/route-schema.js';
import { errorMessage } from '../util/errors.js';
import { nearestKey } from '../base/nearest-key.js';
import type { Config } from './schema.js';
import { formatPath } from '../base/value-path.js';

export interface ReferenceIssue {
  path: PropertyKey[];
  message: string;
}

/**
 * Checks that need the whole validated config: names that refer to other sections (receivers, time
 * intervals) and matcher syntax. The notify stage checks these again when it builds the routing tree,
 * but stops at the first; here every one is reported with its position, which is what `check` is for.
 */
export function checkReferences(config: Config): ReferenceIssue[] {
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

  const walk = (route: RouteConfig, path: PropertyKey[]): void => {
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
