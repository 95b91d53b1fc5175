import type { Labels } from '../../alerts/alert.js';
import { TransferWatchError } from '../../util/errors.js';
import { formatMatcher, matchesAll, parseMatchers, type Matcher } from '../matcher.js';
import type { RouteConfig } from './route-schema.js';

/** Alertmanager's defaults for the root route; child routes inherit from their parent. */
export const DEFAULT_GROUP_WAIT_MS = 30_000;
export const DEFAULT_GROUP_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_REPEAT_INTERVAL_MS = 4 * 3_600_000;

export class RouteError extends TransferWatchError {
  constructor(message: string) {
    super('route_invalid', message);
    this.name = 'RouteError';
  }
}

/** A route's options after inheritance. */
export interface RouteOptions {
  receiver: string;
  /** Label names that form a group; ignored when `groupByAll`. */
  groupBy: string[];
  /** `group_by: ['...']`: every distinct label set is its own group. */
  groupByAll: boolean;
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
  /** Not inherited (as in Alertmanager). */
  muteTimeIntervals: string[];
  activeTimeIntervals: string[];
  /** Contract 14: receivers told of a group nobody acknowledged, each `afterMs` after its first notification. */
  escalate: Array<{ afterMs: number; receiver: string }>;
}

/** A node of the routing tree, with its parsed matchers and inherited options. */
export class Route {
  constructor(
    /** Stable identity within the tree (Alertmanager's route key: the path of matchers from the root). */
    readonly id: string,
    readonly matchers: readonly Matcher[],
    readonly continueMatching: boolean,
    readonly options: RouteOptions,
    readonly routes: readonly Route[],
  ) {}

  /**
   * The routes an alert with these labels goes to: the deepest matching ones, depth first, going on to
   * the next sibling only when the matching one has `continue: true`; the route itself when no child matches.
   */
  match(labels: Labels): Route[] {
    if (!matchesAll(this.matchers, labels)) return [];
    const all: Route[] = [];
    for (const child of this.routes) {
      const matched = child.match(labels);
      all.push(...matched);
      if (matched.length > 0 && !child.continueMatching) break;
    }
    return all.length > 0 ? all : [this];
  }

  /** The labels that identify the alert's group on this route. */
  groupLabels(labels: Labels): Labels {
    if (this.options.groupByAll) return { ...labels };
    const out: Labels = {};
    for (const name of this.options.groupBy) {
      const value = labels[name];
      if (value !== undefined && value !== '') out[name] = value;
    }
    return out;
  }

  /** Alertmanager's group key: `<route id>:{name="value", ...}` with names sorted. */
  groupKey(groupLabels: Labels): string {
    const pairs = Object.keys(groupLabels)
      .sort()
      .map((name) => `${name}=${JSON.stringify(groupLabels[name] ?? '')}`);
    return `${this.id}:{${pairs.join(', ')}}`;
  }

  /** Every route of the tree, root first. */
  *walk(): Generator<Route> {
    yield this;
    for (const child of this.routes) yield* child.walk();
  }
}

/**
 * Build the routing tree from config. Throws RouteError naming the route (`route.routes[1]`) when a
 * matcher cannot be parsed, a receiver or time interval is unknown, or the root has no receiver.
 */
export function buildRoute(
  config: RouteConfig | undefined,
  receiverNames: readonly string[],
  timeIntervalNames: readonly string[] = [],
): Route {
  // Without a `route:` section everything goes to the first receiver, grouped by alert name.
  const root: RouteConfig = config ?? {
    receiver: receiverNames[0] ?? '',
    group_by: ['alertname'],
    matchers: [],
    continue: false,
    mute_time_intervals: [],
    active_time_intervals: [],
    routes: [],
  };
  if (!root.receiver) {
    if (config === undefined) return new Route('{}', [], false, rootOptions(root, ''), []);
    throw new RouteError('route: the root route needs a receiver');
  }
  if (root.matchers.length > 0) throw new RouteError('route: the root route must not have matchers (it matches every alert)');
  const receivers = new Set(receiverNames);
  const intervals = new Set(timeIntervalNames);
  return buildNode(root, undefined, '', 'route', receivers, intervals);
}

function rootOptions(config: RouteConfig, receiver: string): RouteOptions {
  const groupBy = config.group_by ?? [];
  return {
    receiver,
    groupBy: groupBy.filter((n) => n !== '...'),
    groupByAll: groupBy.includes('...'),
    groupWaitMs: config.group_wait ?? DEFAULT_GROUP_WAIT_MS,
    groupIntervalMs: config.group_interval ?? DEFAULT_GROUP_INTERVAL_MS,
    repeatIntervalMs: config.repeat_interval ?? DEFAULT_REPEAT_INTERVAL_MS,
    muteTimeIntervals: config.mute_time_intervals,
    activeTimeIntervals: config.active_time_intervals,
    escalate: escalationSteps(config),
  };
}

function escalationSteps(config: RouteConfig): RouteOptions['escalate'] {
  return (config.escalate ?? []).map((s) => ({ afterMs: s.after, receiver: s.receiver }));
}

function buildNode(
  config: RouteConfig,
  parent: Route | undefined,
  parentId: string,
  where: string,
  receivers: ReadonlySet<string>,
  intervals: ReadonlySet<string>,
  siblingIndex = 0,
): Route {
  const matchers: Matcher[] = [];
  for (const text of config.matchers) {
    try {
      matchers.push(...parseMatchers(text));
    } catch (err) {
      throw new RouteError(`${where}.matchers: ${(err as Error).message}`);
    }
  }
  const inherited = parent?.options;
  const receiver = config.receiver ?? inherited?.receiver ?? '';
  if (!receivers.has(receiver)) throw new RouteError(`${where}.receiver: unknown receiver "${receiver}"`);
  for (const [i, step] of (config.escalate ?? []).entries()) {
    if (!receivers.has(step.receiver)) throw new RouteError(`${where}.escalate[${i}].receiver: unknown receiver "${step.receiver}"`);
  }
  for (const name of [...config.mute_time_intervals, ...config.active_time_intervals]) {
    if (!intervals.has(name)) throw new RouteError(`${where}: unknown time interval "${name}" (define it under mute_time_intervals)`);
  }
  const groupBy = config.group_by;
  const options: RouteOptions = inherited
    ? {
        receiver,
        groupBy: groupBy ? groupBy.filter((n) => n !== '...') : inherited.groupBy,
        groupByAll: groupBy ? groupBy.includes('...') : inherited.groupByAll,
        groupWaitMs: config.group_wait ?? inherited.groupWaitMs,
        groupIntervalMs: config.group_interval ?? inherited.groupIntervalMs,
        repeatIntervalMs: config.repeat_interval ?? inherited.repeatIntervalMs,
        muteTimeIntervals: config.mute_time_intervals,
        activeTimeIntervals: config.active_time_intervals,
        escalate: escalationSteps(config),
      }
    : rootOptions(config, receiver);
  // The index keeps two siblings with the same matchers apart.
  const id = parent ? `${parentId}/{${matchers.map(formatMatcher).join(',')}}#${siblingIndex}` : '{}';
  // Children are built after the node so they can inherit its options; Route is immutable, so build twice.
  const shell = new Route(id, matchers, config.continue, options, []);
  const children = config.routes.map((child, i) =>
    buildNode(child, shell, id, `${where}.routes[${i}]`, receivers, intervals, i),
  );
  return new Route(id, matchers, config.continue, options, children);
}
